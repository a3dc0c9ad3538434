// The Deployment admission rules of wasd: the structural rules of the
// scheduling configuration (via workloadbuilder) plus the hand-written
// cross-field rules H1–H5 and the update rules U1–U9 with ratcheting
// (docs/api.md §b.2, §b.3; docs/design.md "Ratcheting").
//
// Objects are apps/v1 Deployments as the API server sends them to admission
// (defaults applied: replicas, strategy). Pure; thread-safe.
#ifndef WASD_RULES_DEPLOYMENT_RULES_H_
#define WASD_RULES_DEPLOYMENT_RULES_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/field_error.h"

namespace wasd::rules {

using workloadbuilder::FieldErrorList;

// The backend flags a caller that passes none gets: native only.
inline const workloadbuilder::BackendSettings kNativeOnly{};

// CREATE: every rule on `deployment`. A Deployment without a carrier → no errors.
// `backends`: --backend, --allowed-backends and the cluster facts (docs/design.md
// Q19): the annotation wasd.io/backend must name an allowed backend, and the
// intent must fit what the Deployment's backend can express
// (workloadbuilder/backend_capabilities.h).
FieldErrorList ValidateDeploymentCreate(
    const nlohmann::json& deployment,
    const workloadbuilder::BackendSettings& backends = kNativeOnly);

// UPDATE: U1–U9 between `old_deployment` and `deployment`; when the scheduling
// config (parsed), spec.replicas, spec.strategy.type and
// spec.template.spec.schedulingGroup are all unchanged, returns no errors
// (ratcheting); otherwise every create rule also runs on the new object.
// The annotation wasd.io/backend is immutable.
FieldErrorList ValidateDeploymentUpdate(
    const nlohmann::json& deployment, const nlohmann::json& old_deployment,
    const workloadbuilder::BackendSettings& backends = kNativeOnly);

// deployments/scale UPDATE (H4): `scale` is the autoscaling/v1 Scale being
// written, `deployment` the stored Deployment. Errors only when the Deployment
// has an explicit gang minCount and 0 < scale.spec.replicas < minCount.
// Names the minCount where the user wrote it, e.g. `must be greater than or
// equal to metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount (3)`.
FieldErrorList ValidateScaleUpdate(const nlohmann::json& scale, const nlohmann::json& deployment);

// The scale ratchet: true when `scale` keeps the spec.replicas of `old_scale`
// (the stored Scale, null when the request has none; an absent count is 0).
// Such a write is never denied, so the webhook answers it without reading the
// Deployment.
bool ScaleReplicasUnchanged(const nlohmann::json& scale, const nlohmann::json& old_scale);

// ValidateScaleUpdate with the ratchet: no errors when ScaleReplicasUnchanged.
FieldErrorList ValidateScaleUpdate(const nlohmann::json& scale, const nlohmann::json& old_scale,
                                   const nlohmann::json& deployment);

// Short (≤ 120 characters) admission warnings for an allowed Deployment, e.g.
// that gang minCount is derived from spec.replicas.
std::vector<std::string> DeploymentWarnings(const nlohmann::json& deployment);

// Warnings for an opt-in that silently does nothing, whatever the carrier: an
// annotation key within kMaxKeyTypo edits of wasd.io/scheduling ("did you
// mean"), any other wasd.io/ annotation key, and wasd.io/scheduling on the
// pod template instead of the Deployment. Each ≤ 120 characters for keys of
// ordinary length; keys over kMaxAnnotationKeyBytes are not looked at.
inline constexpr std::size_t kMaxKeyTypo = 3;
inline constexpr std::size_t kMaxAnnotationKeyBytes = 317;  // 253-byte prefix + "/" + 63
// `wasd_keys_only`: look only at keys starting with "wasd.io/" (the webhook,
// whose decoder keeps just those; `wasd check` looks at every key).
std::vector<std::string> AnnotationWarnings(const nlohmann::json& deployment,
                                            bool wasd_keys_only = false);

// The verdict of the webhook's Deployment path: the errors of
// ValidateDeploymentCreate / ValidateDeploymentUpdate and, when there are
// none, the DeploymentWarnings of the new object — from one reading of its
// scheduling config instead of one per entry point.
struct DeploymentReview {
  FieldErrorList errors;
  std::vector<std::string> warnings;
};
DeploymentReview ReviewDeploymentCreate(
    const nlohmann::json& deployment,
    const workloadbuilder::BackendSettings& backends = kNativeOnly);
DeploymentReview ReviewDeploymentUpdate(
    const nlohmann::json& deployment, const nlohmann::json& old_deployment,
    const workloadbuilder::BackendSettings& backends = kNativeOnly);

}  // namespace wasd::rules

#endif  // WASD_RULES_DEPLOYMENT_RULES_H_
