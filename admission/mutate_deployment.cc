// /mutate-apps-v1-deployment: keeps the marker label `wasd.io/managed: "true"`
// (which the pod webhook's objectSelector and the reconciler's caches key on)
// in step with the Deployment's scheduling config (docs/design.md "Admission
// webhook", Q15, and L6 of the 2026-12 review):
// The carrier is the annotation wasd.io/scheduling alone (docs/design.md Q22):
// spec.scheduling never marks a Deployment. It is kube-controller-manager's
// where the WorkloadWithDeployment gate is on, and where the gate is off
// kube-apiserver drops it after this webhook, so a marker set for it would
// gate pods that nothing manages.
//   - with a carrier: the Deployment's own labels get the marker, and so does
//     its pod template on CREATE, or on an UPDATE that changes the template
//     anyway; an UPDATE that leaves the template alone does not add it (that
//     alone would roll out a new ReplicaSet; with Recreate, downtime) but
//     warns that the pods are tied to PodGroups from the next rollout;
//   - without a carrier: the marker is removed (a marked template without a
//     config would gate pods nobody releases), under the same rule for the
//     template: on an UPDATE that leaves it alone, both labels stay and a
//     warning says why (the reconciler releases such pods, Q15).
#include <optional>

#include "admission/handlers.h"
#include "admission/json_access.h"
#include "objects/json_util.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/field_path.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::admission {

namespace {

using nlohmann::json;
using workloadbuilder::EscapeJsonPointerToken;
using workloadbuilder::kManagedLabel;

const json* ManagedLabel(const json* meta) { return Member(Member(meta, "labels"), kManagedLabel); }

bool Marked(const json* meta) {
  const json* v = ManagedLabel(meta);
  return v != nullptr && v->is_string() && *v == "true";
}

// Adds `wasd.io/managed: "true"` to the labels of the metadata object at
// `meta_pointer` (`meta` is its current value, may be null), creating the
// metadata or labels map when absent. No op when already so.
void MarkLabels(const json* meta, const std::string& meta_pointer, JsonPatch& patch) {
  if (Marked(meta)) return;
  const json* labels = Member(meta, "labels");
  const json marker = {{std::string(kManagedLabel), "true"}};
  if (meta == nullptr || !meta->is_object()) {
    patch.Add(meta_pointer, {{"labels", marker}});
  } else if (labels == nullptr || !labels->is_object()) {
    patch.Add(meta_pointer + "/labels", marker);
  } else {
    patch.Add(meta_pointer + "/labels/" + EscapeJsonPointerToken(kManagedLabel), "true");
  }
}

// Removes the marker (any value) from the labels at `meta_pointer`; false
// when there is none.
bool UnmarkLabels(const json* meta, const std::string& meta_pointer, JsonPatch& patch) {
  if (ManagedLabel(meta) == nullptr) return false;
  patch.Remove(meta_pointer + "/labels/" + EscapeJsonPointerToken(kManagedLabel));
  return true;
}

// True when an UPDATE changes spec.template (compared as the API server's
// semantic equality would: null, absent and empty lists alike).
bool TemplateChanges(const json& request, const json& object) {
  const json* old_object = Member(&request, "oldObject");
  if (old_object == nullptr || !old_object->is_object()) return true;
  const json* now = Path(&object, {"spec", "template"});
  const json* before = Path(old_object, {"spec", "template"});
  if (now == nullptr || before == nullptr) return now != before;
  return !objects::SemanticEqual(*now, *before);
}

std::string NameOf(const json& request, const json& object) {
  std::string_view name = StringOr(Member(&request, "name"));
  if (name.empty()) name = StringOr(Path(&object, {"metadata", "name"}));
  if (name.empty()) name = StringOr(Path(&object, {"metadata", "generateName"}));
  return std::string(name);
}

std::string UnmarkedTemplateWarning(const std::string& name) {
  return "deployment " + name + ": the pod template has no label " + std::string(kManagedLabel) +
         " (the Deployment predates wasd or was written while its webhook was unavailable), so "
         "its pods are tied to PodGroups only from the next rollout; wasd adds the label when the "
         "template changes anyway, because adding it alone would start a rollout. To roll out "
         "now: kubectl rollout restart deployment/" +
         name;
}

std::string NoCarrierWarning(const std::string& name, bool removed) {
  const std::string why =
      "deployment " + name + ": label " + std::string(kManagedLabel) +
      " without a scheduling config (no annotation " +
      std::string(workloadbuilder::kSchedulingAnnotation) +
      ") would tie its pods to a group that nobody creates (gated, or held by their "
      "scheduler)";
  if (removed) return why + "; wasd removed the label";
  return why +
         "; wasd removes it when the pod template changes anyway, because removing it "
         "alone would start a rollout (to do it now: kubectl rollout restart deployment/" +
         name + "); until then the wasd reconciler releases its pods";
}

// Sets the label wasd.io/backend on the metadata object at `meta_pointer`
// (`meta` its value before this patch, may be null) after MarkLabels has
// run on it: MarkLabels has created the metadata and labels maps if they
// were missing, so an add into the labels map is always valid.
// Native is not stamped into a template without the label: absent means
// native, and native Deployments keep the template they had before backends
// existed (no new pod-template hash on upgrade).
void StampBackend(const json* meta, const std::string& meta_pointer,
                  workloadbuilder::Backend backend, JsonPatch& patch) {
  const std::string_view key = workloadbuilder::kBackendLabel;
  const json* label = Member(Member(meta, "labels"), key);
  if (label == nullptr && backend == workloadbuilder::Backend::kNative) return;
  const std::string_view value = workloadbuilder::BackendName(backend);
  const std::string* now = objects::AsString(label);
  if (now != nullptr && *now == value) return;
  patch.Add(meta_pointer + "/labels/" + EscapeJsonPointerToken(key), value);
}

// The backend to stamp into the template (docs/design.md Q19), or nullopt for
// none. CREATE: the annotation wasd.io/backend, else --backend (an
// annotation that names no backend: none; validation denies it). UPDATE:
// the backend the stored Deployment runs on, so no update ever moves a
// Deployment to another scheduler: the stored template's label; without
// one, the stored (immutable) annotation; without either, native (a label
// the update adds is then forced back to native, which means removed or
// set to "native"). A stored label that names no backend: none (the
// validating webhook reports it).
std::optional<workloadbuilder::Backend> BackendToStamp(const json& request, const json& object,
                                                       std::string_view op,
                                                       const workloadbuilder::BackendSettings& s) {
  namespace wb = workloadbuilder;
  if (op == "UPDATE") {
    const json* old_object = Member(&request, "oldObject");
    const json* old_label =
        Path(old_object, {"spec", "template", "metadata", "labels", wb::kBackendLabel});
    if (const std::string* name = objects::AsString(old_label)) return wb::ParseBackend(*name);
    const json* old_annotation =
        Path(old_object, {"metadata", "annotations", wb::kBackendAnnotation});
    if (const std::string* name = objects::AsString(old_annotation)) return wb::ParseBackend(*name);
    return wb::Backend::kNative;
  }
  if (const json* annotation = Path(&object, {"metadata", "annotations", wb::kBackendAnnotation})) {
    const std::string* name = objects::AsString(annotation);
    return name != nullptr ? wb::ParseBackend(*name) : std::nullopt;
  }
  return s.backend;
}

// Issue 30 M2: a non-native backend's own pod webhook may select pods by
// their schedulerName (KAI's matches `spec.schedulerName == 'kai-scheduler'`
// only), and kube-apiserver calls such a webhook only if its condition held
// when the pod arrived: a schedulerName set later by wasd's pod webhook is
// too late for it. So the backend's scheduler is written into the pod
// TEMPLATE, where the template leaves the choice to the default
// (empty or default-scheduler); any other name is the validating webhook's
// to judge. Done when wasd may edit the template (CREATE, or an UPDATE that
// changes it anyway). An UPDATE that leaves the template alone does not get
// it (that alone would start a rollout): such pods still get the scheduler
// from the pod webhook, but a backend webhook that keys on schedulerName
// sees them only from the next rollout (`kubectl rollout restart`).
void StampSchedulerName(const json* tmpl, workloadbuilder::Backend backend,
                        const workloadbuilder::ClusterFacts& facts, JsonPatch& patch) {
  if (backend == workloadbuilder::Backend::kNative) return;
  const json* spec = Member(tmpl, "spec");
  if (spec == nullptr || !spec->is_object()) return;
  const json* name = Member(spec, "schedulerName");
  if (name != nullptr) {
    const std::string* text = objects::AsString(name);
    if (text == nullptr || !(text->empty() || *text == workloadbuilder::kDefaultSchedulerName)) {
      return;
    }
  }
  patch.Add("/spec/template/spec/schedulerName", workloadbuilder::SchedulerNameFor(backend, facts));
}

}  // namespace

Verdict MutateDeployment(const json& request, const Options& options) {
  Verdict v;
  const std::string_view op = StringOr(Member(&request, "operation"));
  if (op != "CREATE" && op != "UPDATE") return v;
  const json* object = Member(&request, "object");
  if (object == nullptr || !object->is_object()) {
    v.bad_request = "request.object must be an object for " + std::string(op);
    return v;
  }
  const json* meta = Member(object, "metadata");
  const json* tmpl = Path(object, {"spec", "template"});
  const bool has_template = tmpl != nullptr && tmpl->is_object();
  const json* tmeta = has_template ? Member(tmpl, "metadata") : nullptr;
  // L6: on UPDATE the template is touched only when it changes anyway.
  const bool may_edit_template = op == "CREATE" || TemplateChanges(request, *object);

  if (workloadbuilder::HasSchedulingCarrier(*object)) {
    MarkLabels(meta, "/metadata", v.patch);
    if (has_template && !Marked(tmeta)) {
      if (may_edit_template) {
        MarkLabels(tmeta, "/spec/template/metadata", v.patch);
      } else {
        v.warnings.push_back(UnmarkedTemplateWarning(NameOf(request, *object)));
      }
    }
    if (has_template && may_edit_template) {
      if (const auto backend = BackendToStamp(request, *object, op, options.backends)) {
        StampBackend(tmeta, "/spec/template/metadata", *backend, v.patch);
        StampSchedulerName(tmpl, *backend, options.backends.facts, v.patch);
      }
    }
    return v;
  }
  // Q15: a marker without a carrier.
  const bool template_marked = has_template && ManagedLabel(tmeta) != nullptr;
  if (template_marked && !may_edit_template) {
    v.warnings.push_back(NoCarrierWarning(NameOf(request, *object), false));
    return v;
  }
  bool removed = UnmarkLabels(meta, "/metadata", v.patch);
  if (template_marked) removed = UnmarkLabels(tmeta, "/spec/template/metadata", v.patch) || removed;
  if (removed) v.warnings.push_back(NoCarrierWarning(NameOf(request, *object), true));
  return v;
}

// The Deployment's scheduling config, and the whole pod template of object
// and oldObject (the template is compared whole: it is changed only when it
// changes anyway).
const base::JsonPaths& MutateDeploymentReads() {
  static const base::JsonPaths paths = {
      {"spec", "replicas"},
      {"spec", "strategy", "type"},
      {"spec", "scheduling"},
      {"spec", "template"},
  };
  return paths;
}

}  // namespace wasd::admission
