// Internal to wasd::rules: the view of one Deployment that every rule reads,
// and the individual rules the entry points in deployment_rules.h compose.
// One rule per file (min_count_rule.cc, strategy_rule.cc, …).
//
// Pure; thread-safe.
#ifndef WASD_RULES_RULE_CONTEXT_H_
#define WASD_RULES_RULE_CONTEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/field_error.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::rules {

using workloadbuilder::FieldErrorList;

// A Deployment as the rules see it. `object` must outlive the view.
struct DeploymentView {
  const nlohmann::json* object = nullptr;
  // wasd's configuration (the annotation) when the Deployment has one;
  // otherwise spec.scheduling, the in-tree integration's, judged by the
  // KEP's rules only (carrier kField): the backend rules do not apply to it.
  workloadbuilder::SchedulingConfig config;
  bool in_tree_field = false;  // spec.scheduling is present (Q22)
  // spec.replicas; 1 when absent (the API server's default).
  std::int64_t replicas = 1;
  // The component's backend flags (outlive the view) and the backend this
  // Deployment uses (DeploymentBackend).
  const workloadbuilder::BackendSettings* backends = nullptr;
  workloadbuilder::Backend backend = workloadbuilder::Backend::kNative;
};

DeploymentView ViewOf(const nlohmann::json& deployment,
                      const workloadbuilder::BackendSettings& backends);

// The rules that run on CREATE (and on a changed UPDATE): carrier errors,
// S2–S17/B1 on the config, H1–H3. `old_view` (UPDATE: the stored object)
// ratchets the unions of the config: see ValidateSchedulingConfig.
FieldErrorList CreateRules(const DeploymentView& view, const DeploymentView* old_view = nullptr);

// H1 (min_count_rule.cc): explicit gang.minCount ≤ spec.replicas unless replicas is 0.
void CheckMinCountWithinReplicas(const DeploymentView& view, FieldErrorList& errors);
// H2 (strategy_rule.cc): gang needs strategy Recreate.
void CheckStrategyForGang(const DeploymentView& view, FieldErrorList& errors);
// Backends (backend_rule.cc, docs/design.md Q19): the annotation wasd.io/backend
// names an allowed backend; the intent fits the backend's capabilities; a
// non-native backend's template names no third scheduler.
void CheckBackend(const DeploymentView& view, FieldErrorList& errors);
// On UPDATE: the annotation wasd.io/backend is immutable.
void CheckBackendUpdate(const DeploymentView& view, const DeploymentView& old_view,
                        FieldErrorList& errors);
// H5 (in_tree_rule.cc, docs/design.md Q22): spec.scheduling and the annotation
// wasd.io/scheduling together: one Deployment, two controllers: denied,
// with the way forward.
void CheckOneController(const DeploymentView& view, FieldErrorList& errors);
// True when the view judges spec.scheduling (no annotation): the in-tree
// integration's Deployment, linted by the KEP's rules only.
inline bool JudgesInTree(const DeploymentView& view) {
  return view.config.carrier == workloadbuilder::Carrier::kField;
}
// H3 (scheduling_group_rule.cc): no pre-set spec.template.spec.schedulingGroup.
void CheckTemplateSchedulingGroup(const DeploymentView& view, FieldErrorList& errors);
// The warnings of DeploymentWarnings (warnings.cc) for an already-read view.
std::vector<std::string> WarningsOf(const DeploymentView& view);

// U1–U9 (update_rules.cc): what may not change between `old_view` and `view`.
void CheckConfigUpdate(const DeploymentView& view, const DeploymentView& old_view,
                       FieldErrorList& errors);
// Ratcheting (ratchet.cc): true when the scheduling config (each carrier,
// compared parsed), spec.replicas, spec.strategy.type and
// spec.template.spec.schedulingGroup are all unchanged.
bool RuleInputsUnchanged(const nlohmann::json& deployment, const nlohmann::json& old_deployment);

}  // namespace wasd::rules

#endif  // WASD_RULES_RULE_CONTEXT_H_
