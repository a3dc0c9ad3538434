// The backend rules (docs/design.md Q19; docs/howto/choose-a-backend.md):
//  - the annotation wasd.io/backend names a backend (NotSupported, with the
//    allowed ones) that --allowed-backends enables (Forbidden, naming the
//    flag), and it is immutable on UPDATE;
//  - the intent fits the backend (workloadbuilder/backend_capabilities.h);
//  - a non-native backend's pod template names no third scheduler: the pod
//    webhook replaces default-scheduler with the backend's scheduler, and a
//    pod sent to another scheduler would never be placed as a gang. Native
//    keeps any schedulerName (a kube-scheduler profile may carry another
//    name), as before backends existed.
#include <string>

#include "rules/rule_context.h"
#include "workloadbuilder/backend_capabilities.h"
#include "workloadbuilder/json_util.h"

namespace wasd::rules {

namespace wb = workloadbuilder;
using nlohmann::json;

namespace {

wb::FieldPath BackendAnnotationPath() {
  return wb::FieldPath::Parse("metadata").Child("annotations").Key(wb::kBackendAnnotation);
}

const json* BackendAnnotation(const json& deployment) {
  return wb::MemberPath(deployment, {"metadata", "annotations", wb::kBackendAnnotation});
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// False (with an error) when the annotation is there and unusable.
bool CheckAnnotation(const DeploymentView& view, FieldErrorList& errors) {
  const json* value = BackendAnnotation(*view.object);
  if (value == nullptr) return true;
  const wb::BackendSettings& settings = *view.backends;
  const std::string* name = wb::AsString(value);
  const std::optional<wb::Backend> backend =
      name != nullptr ? wb::ParseBackend(*name) : std::nullopt;
  if (!backend) {
    errors.push_back(wb::NotSupported(BackendAnnotationPath(), *value, settings.AllowedNames())
                         .For(wb::RuleId::kK1));
    return false;
  }
  if (!settings.Allows(*backend)) {
    errors.push_back(wb::Forbidden(BackendAnnotationPath(),
                                   "backend \"" + *name +
                                       "\" is not enabled in this cluster (--allowed-backends: " +
                                       Joined(settings.AllowedNames()) +
                                       "); use one of those or remove the annotation")
                         .For(wb::RuleId::kK1));
    return false;
  }
  return true;
}

void CheckSchedulerName(const DeploymentView& view, FieldErrorList& errors) {
  if (view.backend == wb::Backend::kNative) return;
  const json* value = wb::MemberPath(*view.object, {"spec", "template", "spec", "schedulerName"});
  if (value == nullptr) return;
  const std::string_view own = wb::SchedulerNameFor(view.backend, view.backends->facts);
  const std::string* name = wb::AsString(value);
  if (name != nullptr && (name->empty() || *name == wb::kDefaultSchedulerName || *name == own)) {
    return;
  }
  errors.push_back(wb::NotSupported(wb::FieldPath::Parse("spec.template.spec.schedulerName"),
                                    *value,
                                    {std::string(wb::kDefaultSchedulerName), std::string(own)})
                       .For(wb::RuleId::kK4));
}

}  // namespace

void CheckBackend(const DeploymentView& view, FieldErrorList& errors) {
  if (!CheckAnnotation(view, errors)) return;  // no backend to check the rest against
  if (view.config.usable()) {
    wb::Append(errors, wb::CheckBackendCapabilities(view.backend, view.config.config,
                                                    view.config.path, view.backends->facts));
  }
  CheckSchedulerName(view, errors);
}

void CheckBackendUpdate(const DeploymentView& view, const DeploymentView& old_view,
                        FieldErrorList& errors) {
  const json* now = BackendAnnotation(*view.object);
  const json* before = BackendAnnotation(*old_view.object);
  if (now == nullptr && before == nullptr) return;
  if (now != nullptr && before != nullptr && *now == *before) return;
  errors.push_back(
      wb::Forbidden(
          BackendAnnotationPath(),
          "field is immutable: the backend is fixed when the Deployment is created (its pods and "
          "PodGroups belong to that scheduler); delete the Deployment and create it again to "
          "change this")
          .For(wb::RuleId::kK2));
}

}  // namespace wasd::rules
