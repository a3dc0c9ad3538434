// DeploymentWarnings: short hints for an allowed Deployment, sent back as
// admission warnings (each ≤ 120 characters, docs/api.md §d.3).
#include <string>
#include <vector>

#include "objects/json_util.h"
#include "rules/deployment_rules.h"
#include "rules/rule_context.h"
#include "workloadbuilder/builder.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

namespace {

// A pod uses a PodGroup's claim only through an entry of its own
// spec.resourceClaims equal to it: the same name and the same
// resourceClaimName / resourceClaimTemplateName (scheduling.k8s.io/v1beta1
// PodGroupResourceClaim). A group claim no template entry equals is
// allocated for the group but used by no pod.
bool SameClaim(const nlohmann::json& group, const nlohmann::json& pod) {
  if (!group.is_object() || !pod.is_object()) return false;
  for (const char* key : {"name", "resourceClaimName", "resourceClaimTemplateName"}) {
    const nlohmann::json* a = objects::Member(group, key);
    const nlohmann::json* b = objects::Member(pod, key);
    if ((a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b)) return false;
  }
  return true;
}

void UnsharedClaims(const nlohmann::json& claims, const nlohmann::json* deployment,
                    std::vector<std::string>& warnings) {
  static const nlohmann::json kNone = nlohmann::json::array();
  const nlohmann::json* pod_claims =
      deployment == nullptr
          ? nullptr
          : objects::MemberPath(*deployment, {"spec", "template", "spec", "resourceClaims"});
  const nlohmann::json& own = pod_claims != nullptr && pod_claims->is_array() ? *pod_claims : kNone;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    bool used = false;
    for (const nlohmann::json& c : own) used = used || SameClaim(claims[i], c);
    if (!used) {
      warnings.push_back("resourceClaims[" + std::to_string(i) +
                         "]: no equal claim in spec.template.spec.resourceClaims; no pod uses it");
    }
  }
}

}  // namespace

std::vector<std::string> DeploymentWarnings(const nlohmann::json& deployment) {
  if (!wb::HasSchedulingCarrier(deployment) && !wb::HasInTreeScheduling(deployment)) return {};
  return WarningsOf(ViewOf(deployment, kNativeOnly));
}

std::vector<std::string> WarningsOf(const DeploymentView& view) {
  std::vector<std::string> warnings;
  if (!view.config.usable()) return warnings;
  const nlohmann::json& config = view.config.config;

  if (wb::IsGang(config) && !wb::ExplicitMinCount(config)) {
    if (view.replicas > 0) {
      warnings.push_back("gang minCount not set: derived from spec.replicas (" +
                         std::to_string(view.replicas) + ")");
    } else {
      warnings.emplace_back(
          "gang minCount not set: 1 while spec.replicas is 0, then derived from spec.replicas");
    }
  }
  if (const nlohmann::json* claims = objects::Member(config, "resourceClaims");
      claims != nullptr && claims->is_array() && !claims->empty()) {
    warnings.emplace_back(
        "resourceClaims are dropped from PodGroups unless the DRAWorkloadResourceClaims gate is "
        "on");
    UnsharedClaims(*claims, view.object, warnings);
  }
  return warnings;
}

}  // namespace wasd::rules
