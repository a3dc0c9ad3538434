#include "rules/rule_ids.h"

#include <cstddef>

namespace wasd::rules {

namespace wb = workloadbuilder;

std::vector<wb::RuleId> RuleIdsOf(const wb::FieldErrorList& errors) {
  std::array<bool, kRuleIds.size()> seen{};
  for (const wb::FieldError& e : errors) seen[static_cast<std::size_t>(e.rule)] = true;
  std::vector<wb::RuleId> out;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) out.push_back(static_cast<wb::RuleId>(i));
  }
  return out;
}

}  // namespace wasd::rules
