#include <utility>

#include "admission/handlers.h"
#include "admission/json_access.h"
#include "rules/deployment_rules.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::admission {

// A Deployment, or a Scale (the scale rule reads its spec.replicas). The
// annotation on the pod template is read only to warn that it does nothing
// there (rules::AnnotationWarnings).
const base::JsonPaths& ValidateDeploymentReads() {
  static const base::JsonPaths paths = {
      {"spec", "replicas"},
      {"spec", "strategy", "type"},
      {"spec", "scheduling"},
      {"spec", "template", "metadata", "labels"},
      {"spec", "template", "metadata", "annotations",
       std::string(workloadbuilder::kSchedulingAnnotation)},
      {"spec", "template", "spec", "schedulingGroup"},
      {"spec", "template", "spec", "schedulerName"},
      // rules::WarningsOf: a group claim no pod claim equals is used by no pod
      {"spec", "template", "spec", "resourceClaims"},
  };
  return paths;
}

namespace {

namespace wb = workloadbuilder;

// docs/design.md Q22: spec.scheduling in a validating review means the in-tree
// integration manages the Deployment (kube-apiserver drops the field before
// this point where it is off). Without wasd's annotation it is not wasd's:
// nothing it would deny is denied, the findings become warnings.
void LeaveToInTree(rules::DeploymentReview& review, std::vector<std::string>& warnings) {
  for (const wb::FieldError& e : review.errors) {
    warnings.push_back(
        "spec.scheduling is managed by kube-controller-manager (WorkloadWithDeployment), not "
        "wasd; judged by the KEP's rules, wasd finds: " +
        e.ToString());
  }
  for (std::string& w : review.warnings) warnings.push_back(std::move(w));
}

std::string InTreeClusterWarning(const nlohmann::json& object) {
  std::string_view name = StringOr(Path(&object, {"metadata", "name"}));
  if (name.empty()) name = "NAME";
  return "this cluster runs the in-tree Workload integration for Deployments: spec.scheduling "
         "would let kube-controller-manager manage this Deployment instead of wasd (`wasd "
         "migrate deployment/" +
         std::string(name) + "` prints the hand-over)";
}

}  // namespace

Verdict ValidateDeployment(const nlohmann::json& request, const Options& options) {
  Verdict v;
  const std::string_view op = StringOr(Member(&request, "operation"));
  if (op != "CREATE" && op != "UPDATE") return v;  // DELETE, CONNECT: nothing to check
  const nlohmann::json* object = Member(&request, "object");
  if (object == nullptr || !object->is_object()) {
    v.bad_request = "request.object must be an object for " + std::string(op);
    return v;
  }
  rules::DeploymentReview review;
  if (op == "CREATE") {
    review = rules::ReviewDeploymentCreate(*object, options.backends);
  } else {
    const nlohmann::json* old = Member(&request, "oldObject");
    if (old == nullptr || !old->is_object()) {
      v.bad_request = "request.oldObject must be an object for UPDATE";
      return v;
    }
    review = rules::ReviewDeploymentUpdate(*object, *old, options.backends);
  }
  const bool wasd_carrier = wb::HasSchedulingCarrier(*object);
  // An UPDATE that removes spec.scheduling from an in-tree Deployment is the
  // in-tree integration's to judge too (kube-apiserver's validation): wasd
  // warns, never denies.
  const nlohmann::json* old = Member(&request, "oldObject");
  const bool in_tree_before = op == "UPDATE" && old != nullptr && old->is_object() &&
                              !wb::HasSchedulingCarrier(*old) && wb::HasInTreeScheduling(*old);
  if (!wasd_carrier && (wb::HasInTreeScheduling(*object) || in_tree_before)) {
    LeaveToInTree(review, v.warnings);
    return v;
  }
  v.errors = std::move(review.errors);
  v.warnings = std::move(review.warnings);
  v.allowed = v.errors.empty();
  // An opt-in that does nothing (a misspelt wasd.io/ key, the annotation on
  // the pod template): said at admission too, not only by `wasd check`.
  if (v.allowed && StringOr(Member(&request, "subResource")).empty()) {
    for (std::string& w : rules::AnnotationWarnings(*object, /*wasd_keys_only=*/true))
      v.warnings.push_back(std::move(w));
    if (op == "CREATE" && wasd_carrier && options.in_tree_deployment_integration) {
      v.warnings.push_back(InTreeClusterWarning(*object));
    }
  }
  return v;
}

}  // namespace wasd::admission
