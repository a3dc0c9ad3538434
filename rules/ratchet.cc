// Ratcheting (DESIGN.md "Contract details"): the Deployment controller and
// other clients update Deployments all the time (annotations, status,
// revision). Such an update must not be denied because the stored object
// breaks a rule introduced later, so rules only run when one of their inputs
// changed.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_context.h"
#include "workloadbuilder/config_text.h"
#include "workloadbuilder/json_util.h"

namespace wasd::rules {

namespace wb = workloadbuilder;
using nlohmann::json;

namespace {

const json& OrNull(const json* value) {
  static const json kNull;
  return value != nullptr ? *value : kNull;
}

const json* Annotation(const json& deployment) {
  const json* annotations = wb::MemberPath(deployment, {"metadata", "annotations"});
  return annotations != nullptr ? wb::Member(*annotations, wb::kSchedulingAnnotation) : nullptr;
}

// The annotation compared parsed: reformatting the text (JSON ↔ YAML, key
// order, spacing) is not a change.
bool AnnotationUnchanged(const json* old_value, const json* new_value) {
  if (old_value == nullptr || new_value == nullptr) return old_value == new_value;
  if (*old_value == *new_value) return true;
  const std::string* old_text = wb::AsString(old_value);
  const std::string* new_text = wb::AsString(new_value);
  if (old_text == nullptr || new_text == nullptr) return false;
  const wb::ParsedText old_parsed = wb::ParseConfigText(*old_text);
  const wb::ParsedText new_parsed = wb::ParseConfigText(*new_text);
  return old_parsed.ok() && new_parsed.ok() &&
         wb::SemanticEqual(old_parsed.value, new_parsed.value);
}

std::int64_t Replicas(const json& deployment) {
  return wb::AsInt(wb::MemberPath(deployment, {"spec", "replicas"})).value_or(1);
}

std::string StrategyType(const json& deployment) {
  const std::string* t = wb::AsString(wb::MemberPath(deployment, {"spec", "strategy", "type"}));
  return t != nullptr ? *t : std::string("RollingUpdate");
}

// The member names of a union error's detail ("must specify one of: `a`,
// `b`" or "must specify exactly one of: …"); empty for any other error.
std::vector<std::string_view> UnionMembers(std::string_view detail) {
  constexpr std::string_view kNone = "must specify one of: ";
  constexpr std::string_view kSeveral = "must specify exactly one of: ";
  std::string_view rest;
  if (detail.starts_with(kNone)) {
    rest = detail.substr(kNone.size());
  } else if (detail.starts_with(kSeveral)) {
    rest = detail.substr(kSeveral.size());
  } else {
    return {};
  }
  std::vector<std::string_view> members;
  for (int guard = 0; guard < 16 && !rest.empty(); ++guard) {  // unions have 2 members
    const std::size_t open = rest.find('`');
    if (open == std::string_view::npos) break;
    const std::size_t close = rest.find('`', open + 1);
    if (close == std::string_view::npos) break;
    members.push_back(rest.substr(open + 1, close - open - 1));
    rest.remove_prefix(close + 1);
  }
  return members;
}

// The value at `suffix` (".a.b[2]", as FieldPath renders it after the
// config's prefix) inside `config`; null when any step is missing. Member
// names of the scheduling config contain no '.', '[' or ']'.
const json* At(const json& config, std::string_view suffix) {
  const json* node = &config;
  for (int guard = 0; guard < 64 && !suffix.empty() && node != nullptr; ++guard) {
    if (suffix.front() == '.') {
      suffix.remove_prefix(1);
      const std::size_t end = std::min(suffix.find('.'), suffix.find('['));
      node = wb::Member(*node, suffix.substr(0, end));
      suffix.remove_prefix(end == std::string_view::npos ? suffix.size() : end);
    } else if (suffix.front() == '[') {
      const std::size_t end = suffix.find(']');
      if (end == std::string_view::npos || !node->is_array()) return nullptr;
      std::size_t index = 0;
      for (char c : suffix.substr(1, end - 1)) {
        if (c < '0' || c > '9' || index > node->size()) return nullptr;
        index = index * 10 + static_cast<std::size_t>(c - '0');
      }
      if (end == 1 || index >= node->size()) return nullptr;
      node = &(*node)[index];
      suffix.remove_prefix(end + 1);
    } else {
      return nullptr;
    }
  }
  return suffix.empty() ? node : nullptr;
}

// True when the union at `path` has the same members set in both configs.
bool SameMembership(const wb::SchedulingConfig& now, const wb::SchedulingConfig& before,
                    const wb::FieldPath& path, const std::vector<std::string_view>& members) {
  const std::string& prefix = now.path.String();
  const std::string& full = path.String();
  if (!full.starts_with(prefix)) return false;
  const std::string_view suffix = std::string_view(full).substr(prefix.size());
  const json* union_now = At(now.config, suffix);
  const json* union_before = At(before.config, suffix);
  if (union_now == nullptr || union_before == nullptr) return false;
  for (std::string_view m : members) {
    if ((wb::Member(*union_now, m) != nullptr) != (wb::Member(*union_before, m) != nullptr)) {
      return false;
    }
  }
  return true;
}

}  // namespace

void DropRatchetedUnionErrors(const DeploymentView& view, const DeploymentView& old_view,
                              FieldErrorList& errors) {
  if (!view.config.usable() || !old_view.config.usable()) return;
  std::erase_if(errors, [&](const wb::FieldError& e) {
    const std::vector<std::string_view> members = UnionMembers(e.detail);
    return !members.empty() && SameMembership(view.config, old_view.config, e.path, members);
  });
}

bool RuleInputsUnchanged(const json& deployment, const json& old_deployment) {
  if (Replicas(deployment) != Replicas(old_deployment)) return false;
  if (StrategyType(deployment) != StrategyType(old_deployment)) return false;
  if (!wb::SemanticEqual(
          OrNull(wb::MemberPath(deployment, {"spec", "template", "spec", "schedulingGroup"})),
          OrNull(wb::MemberPath(old_deployment, {"spec", "template", "spec", "schedulingGroup"})))) {
    return false;
  }
  if (!wb::SemanticEqual(OrNull(wb::MemberPath(deployment, {"spec", "scheduling"})),
                         OrNull(wb::MemberPath(old_deployment, {"spec", "scheduling"})))) {
    return false;
  }
  return AnnotationUnchanged(Annotation(old_deployment), Annotation(deployment));
}

}  // namespace wasd::rules
