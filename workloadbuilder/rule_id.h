// RuleId: which rule a field error breaks, set where the error is made and
// carried with it (FieldError::rule), so that a denial is counted by rule
// (wasd_admission_denials_total{rule}) without reading anything back from the
// error's text.
//
// The rules, by family (docs/metrics.md lists the metric's labels):
//   S1–S17  the scheduling configuration, in either carrier (S17: its shape —
//           unknown members, wrong JSON types, repeated keys, text that does not
//           parse or is too long; S1 never fires: wasd has no feature gate)
//   H1–H5   the Deployment around it: minCount ≤ replicas (H1), strategy
//           Recreate for a gang (H2), no pre-set schedulingGroup (H3), scale
//           below minCount (H4), the two carriers equal (H5)
//   U1–U9   what an UPDATE may not change (U6, minCount, may: it never fires)
//   B1–B3   policy and mode pairs: `all` needs a gang (B1); B2 and B3 refuse a
//           policy or mode a controller does not support, and never fire for
//           wasd, which supports both policies and both modes
//   K1–K5   the backends: K1 wasd.io/backend names no backend, or one that
//           --allowed-backends leaves out; K2 wasd.io/backend changed on UPDATE;
//           K3 an intent field or knob the Deployment's backend cannot express
//           (the capability table), or knobs for another backend; K4 the pod
//           template names a third scheduler; K5 the annotation's backends
//           block is malformed, or appears in spec.scheduling
//   other   an error no rule row names (the default)
//
// A closed set: the metric's label has a fixed cardinality. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_RULE_ID_H_
#define WASD_WORKLOADBUILDER_RULE_ID_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wasd::workloadbuilder {

// clang-format off
enum class RuleId : std::uint8_t {
  kS1, kS2, kS3, kS4, kS5, kS6, kS7, kS8, kS9, kS10, kS11, kS12, kS13, kS14, kS15, kS16, kS17,
  kH1, kH2, kH3, kH4, kH5,
  kU1, kU2, kU3, kU4, kU5, kU6, kU7, kU8, kU9,
  kB1, kB2, kB3,
  kK1, kK2, kK3, kK4, kK5,
  kOther,
};

// The label of each RuleId, in enum order; "other" last.
inline constexpr std::array<std::string_view, 40> kRuleIdNames = {
    "S1",  "S2",  "S3",  "S4",  "S5",  "S6", "S7", "S8", "S9", "S10", "S11",  "S12",
    "S13", "S14", "S15", "S16", "S17", "H1", "H2", "H3", "H4", "H5",  "U1",   "U2",
    "U3",  "U4",  "U5",  "U6",  "U7",  "U8", "U9", "B1", "B2", "B3",
    "K1",  "K2",  "K3",  "K4",  "K5",  "other"};
// clang-format on
static_assert(kRuleIdNames.size() == static_cast<std::size_t>(RuleId::kOther) + 1);
static_assert(kRuleIdNames.back() == "other");

// "S4", "K3", "other", …
constexpr std::string_view RuleIdName(RuleId id) {
  return kRuleIdNames[static_cast<std::size_t>(id)];
}

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_RULE_ID_H_
