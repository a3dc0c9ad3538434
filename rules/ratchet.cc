// Ratcheting (docs/design.md "Contract details"): the Deployment controller and
// other clients update Deployments all the time (annotations, status,
// revision). Such an update must not be denied because the stored object
// breaks a rule introduced later, so rules only run when one of their inputs
// changed.
#include <string>

#include "objects/json_util.h"
#include "rules/rule_context.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/config_text.h"
#include "workloadbuilder/or_null.h"

namespace wasd::rules {

namespace wb = workloadbuilder;
using nlohmann::json;

namespace {

using wb::OrNull;

const json* Annotation(const json& deployment) {
  const json* annotations = objects::MemberPath(deployment, {"metadata", "annotations"});
  return annotations != nullptr ? objects::Member(*annotations, wb::kSchedulingAnnotation)
                                : nullptr;
}

// The annotation compared parsed: reformatting the text (JSON ↔ YAML, key
// order, spacing) is not a change.
bool AnnotationUnchanged(const json* old_value, const json* new_value) {
  if (old_value == nullptr || new_value == nullptr) return old_value == new_value;
  if (*old_value == *new_value) return true;
  const std::string* old_text = objects::AsString(old_value);
  const std::string* new_text = objects::AsString(new_value);
  if (old_text == nullptr || new_text == nullptr) return false;
  const wb::ParsedText old_parsed = wb::ParseConfigText(*old_text);
  const wb::ParsedText new_parsed = wb::ParseConfigText(*new_text);
  return old_parsed.ok() && new_parsed.ok() &&
         objects::SemanticEqual(old_parsed.value, new_parsed.value);
}

std::int64_t Replicas(const json& deployment) {
  return objects::AsInt(objects::MemberPath(deployment, {"spec", "replicas"})).value_or(1);
}

std::string StrategyType(const json& deployment) {
  const std::string* t =
      objects::AsString(objects::MemberPath(deployment, {"spec", "strategy", "type"}));
  return t != nullptr ? *t : std::string("RollingUpdate");
}

}  // namespace

bool RuleInputsUnchanged(const json& deployment, const json& old_deployment) {
  if (Replicas(deployment) != Replicas(old_deployment)) return false;
  if (StrategyType(deployment) != StrategyType(old_deployment)) return false;
  if (!objects::SemanticEqual(
          OrNull(objects::MemberPath(deployment, {"spec", "template", "spec", "schedulingGroup"})),
          OrNull(objects::MemberPath(old_deployment,
                                     {"spec", "template", "spec", "schedulingGroup"})))) {
    return false;
  }
  // The backend rules' inputs (backend_rule.cc).
  if (!objects::SemanticEqual(
          OrNull(
              objects::MemberPath(deployment, {"metadata", "annotations", wb::kBackendAnnotation})),
          OrNull(objects::MemberPath(old_deployment,
                                     {"metadata", "annotations", wb::kBackendAnnotation}))) ||
      !objects::SemanticEqual(
          OrNull(objects::MemberPath(deployment, {"spec", "template", "spec", "schedulerName"})),
          OrNull(objects::MemberPath(old_deployment,
                                     {"spec", "template", "spec", "schedulerName"}))) ||
      !objects::SemanticEqual(
          OrNull(objects::MemberPath(
              deployment, {"spec", "template", "metadata", "labels", wb::kBackendLabel})),
          OrNull(objects::MemberPath(
              old_deployment, {"spec", "template", "metadata", "labels", wb::kBackendLabel})))) {
    return false;
  }
  if (!objects::SemanticEqual(
          OrNull(objects::MemberPath(deployment, {"spec", "scheduling"})),
          OrNull(objects::MemberPath(old_deployment, {"spec", "scheduling"})))) {
    return false;
  }
  return AnnotationUnchanged(Annotation(old_deployment), Annotation(deployment));
}

}  // namespace wasd::rules
