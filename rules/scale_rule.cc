// H4: scaling through deployments/scale (kubectl scale, HPA) may not go below
// an explicit gang.minCount — it acts as a floor (KEP-6276 "Scaling and
// HPA"). Zero stays allowed (DESIGN.md Q5). A derived minCount follows the
// replicas, so it never blocks scaling.
#include <string>

#include "rules/deployment_rules.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/json_util.h"
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
      wb::AsInt(wb::MemberPath(scale, {"spec", "replicas"})).value_or(0);
  if (replicas <= 0 || replicas >= *min_count) return errors;
  errors.push_back(wb::Invalid(
      wb::FieldPath::Parse("spec.replicas"), replicas,
      "must be greater than or equal to spec.scheduling.schedulingPolicy.gang.minCount (" +
          std::to_string(*min_count) + ")"));
  return errors;
}

}  // namespace wasd::rules
