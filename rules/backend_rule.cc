// The backend rules (docs/design.md Q19; docs/howto/choose-a-backend.md):
//  - the annotation wasd.io/backend names a backend (NotSupported, with the
//    allowed ones) that --allowed-backends enables (Forbidden, naming the
//    flag), and it is immutable on UPDATE;
//  - so does the pod template's label wasd.io/backend (what the pod webhook
//    links pods by): an allowed backend name, and on UPDATE the backend the
//    template names (its label; without one the annotation; without either
//    native) never changes, so an update cannot move a Deployment to another
//    scheduler (issue 30 M5);
//  - the intent fits the backend (workloadbuilder/backend_capabilities.h);
//  - a non-native backend's pod template names no third scheduler: the pod
//    webhook replaces default-scheduler with the backend's scheduler, and a
//    pod sent to another scheduler would never be placed as a gang. Native
//    keeps any schedulerName (a kube-scheduler profile may carry another
//    name), as before backends existed.
#include <string>

#include "objects/json_util.h"
#include "rules/rule_context.h"
#include "workloadbuilder/backend_capabilities.h"

namespace wasd::rules {

namespace wb = workloadbuilder;
using nlohmann::json;

namespace {

wb::FieldPath BackendAnnotationPath() {
  return wb::FieldPath::Parse("metadata").Child("annotations").Key(wb::kBackendAnnotation);
}

const json* BackendAnnotation(const json& deployment) {
  return objects::MemberPath(deployment, {"metadata", "annotations", wb::kBackendAnnotation});
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// False (with an error at `path`) when `value` (a backend name from the
// annotation or the template label) is there and names no backend, or one
// --allowed-backends leaves out; `advice` ends the Forbidden message.
bool CheckBackendName(const json* value, const wb::FieldPath& path,
                      const wb::BackendSettings& settings, std::string_view advice,
                      FieldErrorList& errors) {
  if (value == nullptr) return true;
  const std::string* name = objects::AsString(value);
  const std::optional<wb::Backend> backend =
      name != nullptr ? wb::ParseBackend(*name) : std::nullopt;
  if (!backend) {
    errors.push_back(wb::NotSupported(path, *value, settings.AllowedNames()).For(wb::RuleId::kK1));
    return false;
  }
  if (!settings.Allows(*backend)) {
    errors.push_back(
        wb::Forbidden(path, "backend \"" + *name +
                                "\" is not enabled in this cluster (--allowed-backends: " +
                                Joined(settings.AllowedNames()) + "); " + std::string(advice))
            .For(wb::RuleId::kK1));
    return false;
  }
  return true;
}

// False (with an error) when the annotation is there and unusable.
bool CheckAnnotation(const DeploymentView& view, FieldErrorList& errors) {
  return CheckBackendName(BackendAnnotation(*view.object), BackendAnnotationPath(), *view.backends,
                          "use one of those or remove the annotation", errors);
}

wb::FieldPath TemplateLabelPath() {
  return wb::FieldPath::Parse("spec.template.metadata").Child("labels").Key(wb::kBackendLabel);
}

const json* TemplateLabel(const json& deployment) {
  return objects::MemberPath(deployment,
                             {"spec", "template", "metadata", "labels", wb::kBackendLabel});
}

// False (with an error) when the template's label is there and unusable:
// the same verdicts as the annotation's.
bool CheckTemplateLabel(const DeploymentView& view, FieldErrorList& errors) {
  return CheckBackendName(TemplateLabel(*view.object), TemplateLabelPath(), *view.backends,
                          "wasd sets this label from metadata.annotations[wasd.io/backend] when "
                          "the Deployment is created: remove it",
                          errors);
}

// The backend the pod template sends its pods to: the label, else the
// annotation, else native (the pod webhook reads only the label; the
// mutating webhook stamps it from the annotation). nullopt when the label
// or annotation names no backend.
std::optional<wb::Backend> TemplateBackend(const json& deployment) {
  if (const json* label = TemplateLabel(deployment)) {
    const std::string* name = objects::AsString(label);
    return name != nullptr ? wb::ParseBackend(*name) : std::nullopt;
  }
  if (const json* annotation = BackendAnnotation(deployment)) {
    const std::string* name = objects::AsString(annotation);
    return name != nullptr ? wb::ParseBackend(*name) : std::nullopt;
  }
  return wb::Backend::kNative;
}

void CheckSchedulerName(const DeploymentView& view, FieldErrorList& errors) {
  if (view.backend == wb::Backend::kNative) return;
  const json* value =
      objects::MemberPath(*view.object, {"spec", "template", "spec", "schedulerName"});
  if (value == nullptr) return;
  const std::string_view own = wb::SchedulerNameFor(view.backend, view.backends->facts);
  const std::string* name = objects::AsString(value);
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
  const bool annotation_ok = CheckAnnotation(view, errors);
  const bool label_ok = CheckTemplateLabel(view, errors);
  if (!annotation_ok || !label_ok) return;  // no backend to check the rest against
  if (view.config.usable()) {
    wb::Append(errors, wb::CheckBackendCapabilities(view.backend, view.config.config,
                                                    view.config.path, view.backends->facts));
  }
  CheckSchedulerName(view, errors);
}

void CheckBackendUpdate(const DeploymentView& view, const DeploymentView& old_view,
                        FieldErrorList& errors) {
  constexpr std::string_view kFixed =
      "field is immutable: the backend is fixed when the Deployment is created (its pods and "
      "PodGroups belong to that scheduler); delete the Deployment and create it again to "
      "change this";
  const json* now = BackendAnnotation(*view.object);
  const json* before = BackendAnnotation(*old_view.object);
  if (!(now == nullptr && before == nullptr) &&
      !(now != nullptr && before != nullptr && *now == *before)) {
    errors.push_back(
        wb::Forbidden(BackendAnnotationPath(), std::string(kFixed)).For(wb::RuleId::kK2));
  }
  // The template's backend. A label that names no backend has its own error
  // (CheckTemplateLabel); a stored one that names none cannot be compared.
  const std::optional<wb::Backend> old_backend = TemplateBackend(*old_view.object);
  const std::optional<wb::Backend> new_backend = TemplateBackend(*view.object);
  if (!old_backend || !new_backend || *old_backend == *new_backend) return;
  errors.push_back(
      wb::Forbidden(TemplateLabelPath(), std::string(kFixed) +
                                             " (the stored pod template runs on backend \"" +
                                             std::string(wb::BackendName(*old_backend)) + "\")")
          .For(wb::RuleId::kK2));
}

}  // namespace wasd::rules
