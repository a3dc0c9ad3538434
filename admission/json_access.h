// Read access to untrusted JSON for the admission handlers: pointer-chaining
// adapters over objects/json_util.h (which checks types, never
// inserts, and treats a null member as absent), plus a byte-level nesting
// check that runs before any parser sees the body. Pure; thread-safe.
#ifndef WASD_ADMISSION_JSON_ACCESS_H_
#define WASD_ADMISSION_JSON_ACCESS_H_

#include <cstddef>
#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

#include "objects/json_util.h"

namespace wasd::admission {

// The member `key` of `*obj`; null when `obj` is null, not an object, lacks
// the member, or the member is JSON null.
inline const nlohmann::json* Member(const nlohmann::json* obj, std::string_view key) {
  return obj == nullptr ? nullptr : objects::Member(*obj, key);
}
// Follows a chain of member names; null when any step is missing.
inline const nlohmann::json* Path(const nlohmann::json* obj,
                                  std::initializer_list<std::string_view> keys) {
  return obj == nullptr ? nullptr : objects::MemberPath(*obj, keys);
}
// The string value at `v`, or `fallback` when `v` is null or not a string.
inline std::string_view StringOr(const nlohmann::json* v, std::string_view fallback = {}) {
  const std::string* s = objects::AsString(v);
  return s == nullptr ? fallback : std::string_view(*s);
}
// True when `v` is present and not JSON null.
inline bool IsSet(const nlohmann::json* v) { return v != nullptr && !v->is_null(); }

// Maximum nesting of arrays/objects in `text`, counted without parsing
// (strings skipped). Stops counting at `limit` + 1. Used to refuse deeply
// nested input before it reaches a parser.
std::size_t NestingDepth(std::string_view text, std::size_t limit);

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_JSON_ACCESS_H_
