// RuleIdOf: which row of the rule tables in WAS-API.md §b (S1–S17, H1–H5,
// U1–U9, B1–B3) a field error of the Deployment rules comes from, so the
// webhook can count denials by rule (wasd_admission_denials_total{rule}).
//
// The rules report field errors, not ids; the id is read back from the
// error's path (relative to the carrier), type, value and detail, which the
// rule tables fix. An error no row explains is "other". The table-driven
// test (tests/rules/rule_ids_test.cc) runs a failing case of every row
// through the real validators, so a rule whose wording or path changes
// without this file shows up there.
//
// Pure; thread-safe.
#ifndef WASD_RULES_RULE_IDS_H_
#define WASD_RULES_RULE_IDS_H_

#include <array>
#include <string_view>
#include <vector>

#include "workloadbuilder/field_error.h"

namespace wasd::rules {

// Every id RuleIdOf can return, in table order; "other" last. A closed set,
// so the metric's label has a fixed cardinality.
// K1–K5 are the backend rules (DESIGN.md Q19, rules/backend_rule.cc):
//   K1 wasd.io/backend (annotation or pod-template label) names no backend,
//      or one --allowed-backends leaves out
//   K2 wasd.io/backend (annotation, or the template's backend) changed on UPDATE
//   K3 an intent field the Deployment's backend cannot express (capability table)
//   K4 the pod template names a third scheduler
//   K5 the backends block of the annotation is malformed (or in spec.scheduling)
// clang-format off
inline constexpr std::array<std::string_view, 40> kRuleIds = {
    "S1",  "S2",  "S3",  "S4",  "S5",  "S6", "S7", "S8", "S9", "S10", "S11",  "S12",
    "S13", "S14", "S15", "S16", "S17", "H1", "H2", "H3", "H4", "H5",  "U1",   "U2",
    "U3",  "U4",  "U5",  "U6",  "U7",  "U8", "U9", "B1", "B2", "B3",
    "K1",  "K2",  "K3",  "K4",  "K5",  "other"};
// clang-format on

// The rule id of one error returned by ValidateDeploymentCreate/Update or
// ValidateScaleUpdate. Never empty; "other" when no row matches.
std::string_view RuleIdOf(const workloadbuilder::FieldError& error);

// The distinct ids of `errors`, in kRuleIds order.
std::vector<std::string_view> RuleIdsOf(const workloadbuilder::FieldErrorList& errors);

}  // namespace wasd::rules

#endif  // WASD_RULES_RULE_IDS_H_
