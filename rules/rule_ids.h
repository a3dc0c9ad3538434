// RuleIdsOf: the rules a denial breaks, for counting denials by rule
// (wasd_admission_denials_total{rule}). Each field error carries the id of
// its rule from where the rule made it (workloadbuilder/rule_id.h); nothing
// is read back from the error's path or text. The table-driven test
// (tests/rules/rule_ids_test.cc) runs a failing case of every rule through
// the real validators and checks the id its error carries.
//
// Pure; thread-safe.
#ifndef WASD_RULES_RULE_IDS_H_
#define WASD_RULES_RULE_IDS_H_

#include <array>
#include <string_view>
#include <vector>

#include "workloadbuilder/field_error.h"
#include "workloadbuilder/rule_id.h"

namespace wasd::rules {

// Every rule id, in RuleId order; "other" last. A closed set, so the
// metric's label has a fixed cardinality.
inline constexpr const std::array<std::string_view, 40>& kRuleIds = workloadbuilder::kRuleIdNames;

// The distinct rule ids carried by `errors`, in RuleId order.
std::vector<workloadbuilder::RuleId> RuleIdsOf(const workloadbuilder::FieldErrorList& errors);

}  // namespace wasd::rules

#endif  // WASD_RULES_RULE_IDS_H_
