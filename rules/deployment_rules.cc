// Entry points of deployment_rules.h: compose the individual rules.
#include "rules/deployment_rules.h"

#include "objects/json_util.h"
#include "rules/rule_context.h"
#include "rules/usable_config.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

namespace {

// wasd's annotation or the in-tree field: either is judged.
bool HasAnyConfig(const nlohmann::json& deployment) {
  return wb::HasSchedulingCarrier(deployment) || wb::HasInTreeScheduling(deployment);
}

}  // namespace

DeploymentView ViewOf(const nlohmann::json& deployment, const wb::BackendSettings& backends) {
  DeploymentView view;
  view.object = &deployment;
  view.in_tree_field = wb::HasInTreeScheduling(deployment);
  view.config = wb::HasSchedulingCarrier(deployment) ? wb::ReadSchedulingConfig(deployment)
                                                     : wb::ReadInTreeSchedulingConfig(deployment);
  view.replicas = objects::AsInt(objects::MemberPath(deployment, {"spec", "replicas"})).value_or(1);
  view.backends = &backends;
  view.backend = wb::DeploymentBackend(deployment, backends.backend);
  return view;
}

FieldErrorList CreateRules(const DeploymentView& view, const DeploymentView* old_view) {
  if (!view.config.present()) return {};
  const nlohmann::json* old_config =
      old_view != nullptr && old_view->config.usable() ? &old_view->config.config : nullptr;
  FieldErrorList errors = CheckSchedulingConfig(view.config, old_config).errors;  // usable_config.h
  CheckMinCountWithinReplicas(view, errors);                                      // H1
  CheckStrategyForGang(view, errors);                                             // H2
  CheckTemplateSchedulingGroup(view, errors);                                     // H3
  CheckOneController(view, errors);                                               // H5, Q22
  if (!JudgesInTree(view)) CheckBackend(view, errors);                            // Q19
  return errors;
}

namespace {

FieldErrorList UpdateRules(const DeploymentView& view, const nlohmann::json& old_deployment) {
  const DeploymentView old_view = ViewOf(old_deployment, *view.backends);
  FieldErrorList errors = CreateRules(view, &old_view);
  CheckConfigUpdate(view, old_view, errors);  // U1–U9
  if (!JudgesInTree(view)) CheckBackendUpdate(view, old_view, errors);
  return errors;
}

}  // namespace

DeploymentReview ReviewDeploymentCreate(const nlohmann::json& deployment,
                                        const wb::BackendSettings& backends) {
  DeploymentReview review;
  if (!HasAnyConfig(deployment)) return review;
  const DeploymentView view = ViewOf(deployment, backends);
  review.errors = CreateRules(view);
  if (review.errors.empty()) review.warnings = WarningsOf(view);
  return review;
}

DeploymentReview ReviewDeploymentUpdate(const nlohmann::json& deployment,
                                        const nlohmann::json& old_deployment,
                                        const wb::BackendSettings& backends) {
  DeploymentReview review;
  const bool carrier = HasAnyConfig(deployment);
  if (!carrier && !HasAnyConfig(old_deployment)) return review;
  const bool unchanged = RuleInputsUnchanged(deployment, old_deployment);
  if (unchanged && !carrier) return review;
  const DeploymentView view = ViewOf(deployment, backends);
  if (!unchanged) review.errors = UpdateRules(view, old_deployment);
  if (review.errors.empty() && carrier) review.warnings = WarningsOf(view);
  // Admitted (ratcheted, or its rule inputs unchanged) with a configuration
  // the reconciler cannot use: the rollout this UPDATE may start makes pods
  // that no group will hold together (the reconciler releases them alone).
  if (review.errors.empty() && wb::HasSchedulingCarrier(deployment)) {
    const ConfigVerdict verdict = CheckSchedulingConfig(view.config);
    if (!verdict.usable && !verdict.errors.empty()) {
      review.warnings.insert(
          review.warnings.begin(),
          std::string(wb::kSchedulingAnnotation) + ": the stored configuration is not usable (" +
              wb::AggregateMessage(verdict.errors) +
              "), so wasd manages no gang for this Deployment: new pods of this rollout get no "
              "gang: fix the annotation");
    }
  }
  return review;
}

FieldErrorList ValidateDeploymentCreate(const nlohmann::json& deployment,
                                        const wb::BackendSettings& backends) {
  return ReviewDeploymentCreate(deployment, backends).errors;
}

FieldErrorList ValidateDeploymentUpdate(const nlohmann::json& deployment,
                                        const nlohmann::json& old_deployment,
                                        const wb::BackendSettings& backends) {
  return ReviewDeploymentUpdate(deployment, old_deployment, backends).errors;
}

}  // namespace wasd::rules
