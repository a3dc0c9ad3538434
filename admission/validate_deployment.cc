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
  };
  return paths;
}

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
  v.errors = std::move(review.errors);
  v.warnings = std::move(review.warnings);
  v.allowed = v.errors.empty();
  // An opt-in that does nothing (a misspelt wasd.io/ key, the annotation on
  // the pod template): said at admission too, not only by `wasd check`.
  if (v.allowed && StringOr(Member(&request, "subResource")).empty()) {
    for (std::string& w : rules::AnnotationWarnings(*object, /*wasd_keys_only=*/true))
      v.warnings.push_back(std::move(w));
  }
  return v;
}

}  // namespace wasd::admission
