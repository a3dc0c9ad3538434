// H5 (docs/design.md Q22): `spec.scheduling` belongs to kube-controller-manager's
// Workload integration (KEP-6276, feature gate WorkloadWithDeployment), the
// annotation wasd.io/scheduling to wasd. With both, two controllers would
// create Workloads and PodGroups for the same pods, so the Deployment is
// denied with the way forward. kube-apiserver drops spec.scheduling before
// validating admission where the gate is off, so this denial is only ever
// seen on a cluster that runs the in-tree integration (and by `wasd check`).
#include <string>

#include "objects/json_util.h"
#include "rules/rule_context.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

void CheckOneController(const DeploymentView& view, FieldErrorList& errors) {
  if (!view.in_tree_field || !wb::HasSchedulingCarrier(*view.object)) return;
  const std::string* name =
      objects::AsString(objects::MemberPath(*view.object, {"metadata", "name"}));
  const std::string target = "deployment/" + (name != nullptr ? *name : std::string("NAME"));
  errors.push_back(
      wb::Forbidden(
          wb::FieldPath::Parse("spec.scheduling"),
          "may not be set together with metadata.annotations[wasd.io/scheduling]: spec.scheduling "
          "hands the Deployment to kube-controller-manager (WorkloadWithDeployment), the "
          "annotation "
          "to wasd, and one Deployment cannot have both. Keep one: remove the annotation to leave "
          "it to the in-tree controller, or remove spec.scheduling to keep wasd; `wasd migrate " +
              target + "` hands a wasd Deployment over to the in-tree controller")
          .For(wb::RuleId::kH5));
}

}  // namespace wasd::rules
