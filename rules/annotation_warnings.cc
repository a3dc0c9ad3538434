// AnnotationWarnings: the opt-in that silently did nothing — a misspelt
// wasd.io/ annotation key, or the annotation put on the pod template.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "objects/json_util.h"
#include "rules/deployment_rules.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

namespace {

// Keys are at most 317 bytes (a 253-byte prefix, "/", a 63-byte name): the
// two-row Levenshtein table is small and the loop bounded.
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> AnnotationWarnings(const nlohmann::json& deployment, bool wasd_keys_only) {
  std::vector<std::string> warnings;
  const std::string_view wanted = wb::kSchedulingAnnotation;
  if (const nlohmann::json* annotations =
          objects::MemberPath(deployment, {"metadata", "annotations"});
      annotations != nullptr && annotations->is_object()) {
    for (const auto& [key, value] : annotations->items()) {
      if (key == wanted || key.size() > kMaxAnnotationKeyBytes) continue;
      if (key == wb::kBackendAnnotation) {
        // Read only next to a scheduling config (backend_rule.cc checks it there).
        if (!wb::HasSchedulingCarrier(deployment)) {
          warnings.push_back("annotation " + key + " does nothing without " + std::string(wanted));
        }
        continue;
      }
      const bool ours = key.rfind("wasd.io/", 0) == 0;
      if (wasd_keys_only && !ours) continue;
      const std::size_t diff =
          key.size() > wanted.size() ? key.size() - wanted.size() : wanted.size() - key.size();
      const bool close = diff <= kMaxKeyTypo && EditDistance(key, wanted) <= kMaxKeyTypo;
      if (close) {
        warnings.push_back("annotation " + key + " is not read by wasd: did you mean " +
                           std::string(wanted) + "?");
      } else if (ours) {
        warnings.push_back("annotation " + key + " is not read by wasd (it reads " +
                           std::string(wanted) + ")");
      }
    }
  }
  const nlohmann::json* template_annotations =
      objects::MemberPath(deployment, {"spec", "template", "metadata", "annotations"});
  if (template_annotations != nullptr && template_annotations->is_object() &&
      template_annotations->contains(std::string(wanted))) {
    warnings.push_back(std::string(wanted) +
                       " on the pod template is ignored: put it in the Deployment's "
                       "metadata.annotations");
  }
  return warnings;
}

}  // namespace wasd::rules
