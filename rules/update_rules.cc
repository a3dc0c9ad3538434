// U1–U9: the scheduling configuration is fixed at creation except for
// gang.minCount (docs/api.md §b.3, KEP-6276 DV markers). Errors use the
// Forbidden form (docs/api.md §b.3), not the current
// declarative-validation form, Invalid with a null value: that prints
// `Invalid value: "null"` for a field the user did set. Each names the way
// forward, the recreate path of docs/operations.md ("Opting an existing
// Deployment in or out").
#include <string>
#include <string_view>

#include "objects/json_util.h"
#include "rules/rule_context.h"
#include "workloadbuilder/or_null.h"

namespace wasd::rules {

namespace wb = workloadbuilder;
using nlohmann::json;

namespace {

constexpr std::string_view kSetOnce = "field cannot be set once created";
constexpr std::string_view kClearOnce = "field cannot be cleared once set";
constexpr std::string_view kImmutable = "field is immutable";
// U3–U9: what may change in place, and how to change the rest.
constexpr std::string_view kRecreate =
    ": only gang.minCount can change in an existing Deployment; delete the Deployment and "
    "create it again to change this";

using wb::OrNull;

wb::FieldError FixedAtCreation(const wb::FieldPath& path, std::string_view what, wb::RuleId rule) {
  return wb::Forbidden(path, std::string(what) + std::string(kRecreate)).For(rule);
}

void NoSetNoUnset(const json* old_value, const json* new_value, const wb::FieldPath& path,
                  wb::RuleId rule, FieldErrorList& errors) {
  if (old_value == nullptr && new_value != nullptr) {
    errors.push_back(FixedAtCreation(path, kSetOnce, rule));
  } else if (old_value != nullptr && new_value == nullptr) {
    errors.push_back(FixedAtCreation(path, kClearOnce, rule));
  }
}

void Immutable(const json* old_value, const json* new_value, const wb::FieldPath& path,
               wb::RuleId rule, FieldErrorList& errors) {
  if (!objects::SemanticEqual(OrNull(old_value), OrNull(new_value))) {
    errors.push_back(FixedAtCreation(path, kImmutable, rule));
  }
}

// The carrier as the user wrote it, for the opt-in/opt-out hint.
std::string_view CarrierWords(const wb::SchedulingConfig& config) {
  switch (config.carrier) {
    case wb::Carrier::kAnnotation: return "the wasd.io/scheduling annotation";
    default: return "spec.scheduling";
  }
}

// U3–U5 on schedulingPolicy; gang.minCount (U6) may change freely.
// Switching between basic and gang (U4, U5) is refused in wasd's own words:
// the KEP's hand-written validation of this switch has no published error
// text, so the messages here are not a copy of the API server's and may read
// differently from what kube-apiserver prints for spec.scheduling.
void CheckPolicyUpdate(const json& old_config, const json& config, const wb::FieldPath& path,
                       FieldErrorList& errors) {
  const json* old_policy = objects::Member(old_config, "schedulingPolicy");
  const json* policy = objects::Member(config, "schedulingPolicy");
  if (old_policy == nullptr || policy == nullptr) {
    NoSetNoUnset(old_policy, policy, path, wb::RuleId::kU3, errors);
    return;
  }
  Immutable(objects::Member(*old_policy, "basic"), objects::Member(*policy, "basic"),
            path.Child("basic"), wb::RuleId::kU4, errors);
  NoSetNoUnset(objects::Member(*old_policy, "gang"), objects::Member(*policy, "gang"),
               path.Child("gang"), wb::RuleId::kU5, errors);
}

}  // namespace

void CheckConfigUpdate(const DeploymentView& view, const DeploymentView& old_view,
                       FieldErrorList& errors) {
  const wb::SchedulingConfig& now = view.config;
  const wb::SchedulingConfig& old = old_view.config;
  if (!old.present() && now.present()) {  // U1: opting in
    errors.push_back(
        wb::Forbidden(
            now.path,
            std::string(kSetOnce) +
                "; to opt an existing Deployment in, delete it and create it again with " +
                std::string(CarrierWords(now)))
            .For(wb::RuleId::kU1));
    return;
  }
  if (old.present() && !now.present()) {  // U2: opting out
    errors.push_back(
        wb::Forbidden(old.path,
                      std::string(kClearOnce) +
                          "; to opt a Deployment out, delete it and create it again without " +
                          std::string(CarrierWords(old)))
            .For(wb::RuleId::kU2));
    return;
  }
  // A config that cannot be read on either side has nothing to compare; the
  // new side's problems are reported by the create rules.
  if (!old.usable() || !now.usable()) return;
  const wb::FieldPath& p = now.path;
  CheckPolicyUpdate(old.config, now.config, p.Child("schedulingPolicy"), errors);
  struct Fixed {
    std::string_view member;
    wb::RuleId rule;
  };
  for (const Fixed& f :
       {Fixed{"schedulingConstraints", wb::RuleId::kU7}, Fixed{"disruptionMode", wb::RuleId::kU8},
        Fixed{"resourceClaims", wb::RuleId::kU9}}) {
    Immutable(objects::Member(old.config, f.member), objects::Member(now.config, f.member),
              p.Child(f.member), f.rule, errors);
  }
}

}  // namespace wasd::rules
