// H3: a Deployment that opts into wasd may not pre-set the pods' scheduling
// group in its template: wasd names each pod's PodGroup itself (one per
// ReplicaSet revision), and a fixed group would tie every revision together.
#include <string>

#include "objects/json_util.h"
#include "rules/rule_context.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

void CheckTemplateSchedulingGroup(const DeploymentView& view, FieldErrorList& errors) {
  if (!view.config.present()) return;
  if (objects::MemberPath(*view.object, {"spec", "template", "spec", "schedulingGroup"}) ==
      nullptr) {
    return;
  }
  // Names the carrier the user wrote: the annotation or spec.scheduling.
  errors.push_back(wb::Forbidden(wb::FieldPath::Parse("spec.template.spec.schedulingGroup"),
                                 "may not be set when " + view.config.path.String() + " is set")
                       .For(wb::RuleId::kH3));
}

}  // namespace wasd::rules
