// H1: an explicit gang.minCount may not exceed spec.replicas (docs/api.md
// §b.2). Zero replicas are allowed with any minCount (docs/design.md Q5: a
// Deployment scaled to zero keeps its explicit minCount).
#include <string>

#include "rules/rule_context.h"
#include "workloadbuilder/builder.h"

namespace wasd::rules {

void CheckMinCountWithinReplicas(const DeploymentView& view, FieldErrorList& errors) {
  if (!view.config.usable()) return;
  const auto min_count = workloadbuilder::ExplicitMinCount(view.config.config);
  // Values below 1 are S4's business; report each problem once.
  if (!min_count || *min_count < 1) return;
  if (view.replicas <= 0 || *min_count <= view.replicas) return;
  errors.push_back(
      workloadbuilder::Invalid(
          view.config.path.Child("schedulingPolicy").Child("gang").Child("minCount"), *min_count,
          "must be less than or equal to spec.replicas (" + std::to_string(view.replicas) + ")")
          .For(workloadbuilder::RuleId::kH1));
}

}  // namespace wasd::rules
