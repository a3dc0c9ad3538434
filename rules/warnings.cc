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
  }
  return warnings;
}

}  // namespace wasd::rules
