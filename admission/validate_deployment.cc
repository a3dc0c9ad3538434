#include "admission/handlers.h"
#include "admission/json_access.h"
#include "rules/deployment_rules.h"

namespace wasd::admission {

Verdict ValidateDeployment(const nlohmann::json& request) {
  Verdict v;
  const std::string_view op = StringOr(Member(&request, "operation"));
  if (op != "CREATE" && op != "UPDATE") return v;  // DELETE, CONNECT: nothing to check
  const nlohmann::json* object = Member(&request, "object");
  if (object == nullptr || !object->is_object()) {
    v.bad_request = "request.object must be an object for " + std::string(op);
    return v;
  }
  if (op == "CREATE") {
    v.errors = rules::ValidateDeploymentCreate(*object);
  } else {
    const nlohmann::json* old = Member(&request, "oldObject");
    if (old == nullptr || !old->is_object()) {
      v.bad_request = "request.oldObject must be an object for UPDATE";
      return v;
    }
    v.errors = rules::ValidateDeploymentUpdate(*object, *old);
  }
  v.allowed = v.errors.empty();
  if (v.allowed) v.warnings = rules::DeploymentWarnings(*object);
  return v;
}

}  // namespace wasd::admission
