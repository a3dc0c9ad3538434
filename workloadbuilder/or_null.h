// OrNull: a member looked up with json_util.h's Member()/MemberPath() (a
// pointer, null when absent) handed to code that takes a value, such as
// SemanticEqual or the backend and scale rules. The one copy for the rules
// and the admission handlers. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_OR_NULL_H_
#define WASD_WORKLOADBUILDER_OR_NULL_H_

#include <nlohmann/json.hpp>

namespace wasd::workloadbuilder {

// `*value`, or a JSON null when `value` is nullptr.
inline const nlohmann::json& OrNull(const nlohmann::json* value) {
  static const nlohmann::json kNull;
  return value != nullptr ? *value : kNull;
}

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_OR_NULL_H_
