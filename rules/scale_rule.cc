// H4: scaling through deployments/scale (kubectl scale, HPA) may not go below
// an explicit gang.minCount — it acts as a floor (KEP-6276 "Scaling and
// HPA"). Zero stays allowed (docs/design.md Q5). A derived minCount follows the
// replicas, so it never blocks scaling.
//
// Ratcheting: a Scale write that keeps the replica count is never denied,
// so a Deployment stored below its floor (created before wasd, or with the
// webhook down) can still be touched through /scale.
#include <string>

#include "objects/json_util.h"
#include "rules/deployment_rules.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

FieldErrorList ValidateScaleUpdate(const nlohmann::json& scale, const nlohmann::json& deployment) {
  FieldErrorList errors;
  if (!wb::HasSchedulingCarrier(deployment)) return errors;
  const wb::SchedulingConfig config = wb::ReadSchedulingConfig(deployment);
  if (!config.usable()) return errors;
  const auto min_count = wb::ExplicitMinCount(config.config);
  if (!min_count) return errors;
  // autoscaling/v1 Scale omits spec.replicas when it is 0.
  const std::int64_t replicas =
      objects::AsInt(objects::MemberPath(scale, {"spec", "replicas"})).value_or(0);
  if (replicas <= 0 || replicas >= *min_count) return errors;
  // Named where the user wrote it: the annotation (wasd's only carrier; a
  // Deployment with spec.scheduling alone is the in-tree integration's and
  // is not checked here).
  const wb::FieldPath min_count_path =
      config.path.Child("schedulingPolicy").Child("gang").Child("minCount");
  errors.push_back(wb::Invalid(wb::FieldPath::Parse("spec.replicas"), replicas,
                               "must be greater than or equal to " + min_count_path.String() +
                                   " (" + std::to_string(*min_count) + ")")
                       .For(wb::RuleId::kH4));
  return errors;
}

bool ScaleReplicasUnchanged(const nlohmann::json& scale, const nlohmann::json& old_scale) {
  // autoscaling/v1 Scale omits spec.replicas when it is 0; a count that is
  // not an integer reads as 0 too, which H4 never denies either.
  const auto replicas = [](const nlohmann::json& s) {
    return objects::AsInt(objects::MemberPath(s, {"spec", "replicas"})).value_or(0);
  };
  return replicas(scale) == replicas(old_scale);
}

FieldErrorList ValidateScaleUpdate(const nlohmann::json& scale, const nlohmann::json& old_scale,
                                   const nlohmann::json& deployment) {
  if (ScaleReplicasUnchanged(scale, old_scale)) return {};  // ratcheting
  return ValidateScaleUpdate(scale, deployment);
}

}  // namespace wasd::rules
