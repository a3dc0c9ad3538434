#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admission/handlers.h"
#include "admission/json_access.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/field_path.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/or_null.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::admission {

namespace {

using workloadbuilder::Backend;
using workloadbuilder::kBackendLabel;
using workloadbuilder::kManagedLabel;
using workloadbuilder::kPodGroupGate;
using workloadbuilder::kPodTemplateHashLabel;

struct ReplicaSetRef {
  std::string_view name;
  std::string_view uid;
};

// The pod's controlling ReplicaSet (apps/v1), or empty names when the
// controller is something else or absent, or has no name or uid.
ReplicaSetRef ControllingReplicaSet(const nlohmann::json* meta) {
  const nlohmann::json* refs = Member(meta, "ownerReferences");
  if (refs == nullptr || !refs->is_array()) return {};
  for (const nlohmann::json& ref : *refs) {
    const nlohmann::json* controller = Member(&ref, "controller");
    if (controller == nullptr || !controller->is_boolean() || !controller->get<bool>()) continue;
    // At most one controller reference exists; it decides.
    if (StringOr(Member(&ref, "kind")) != "ReplicaSet") return {};
    if (StringOr(Member(&ref, "apiVersion")) != "apps/v1") return {};
    ReplicaSetRef rs{StringOr(Member(&ref, "name")), StringOr(Member(&ref, "uid"))};
    if (rs.name.empty() || rs.uid.empty()) return {};
    return rs;
  }
  return {};
}

using workloadbuilder::OrNull;

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  names.reserve(workloadbuilder::kAllBackends.size());
  for (Backend b : workloadbuilder::kAllBackends) {
    names.emplace_back(workloadbuilder::BackendName(b));
  }
  return names;
}

// Adds `entries` (key → value) to the string map `map_name` ("labels" or
// "annotations") of the pod's metadata `meta` (an object).
void AddToMap(const nlohmann::json* meta, std::string_view map_name,
              std::initializer_list<std::pair<std::string_view, std::string_view>> entries,
              JsonPatch& patch) {
  const nlohmann::json* map = Member(meta, map_name);
  const std::string map_pointer = "/metadata/" + std::string(map_name);
  if (map == nullptr || !map->is_object()) {
    nlohmann::json value = nlohmann::json::object();
    for (const auto& [k, val] : entries) value[std::string(k)] = val;
    patch.Add(map_pointer, value);
    return;
  }
  for (const auto& [k, val] : entries) {
    patch.Add(map_pointer + "/" + workloadbuilder::EscapeJsonPointerToken(k), val);
  }
}

// The link of a non-native backend (docs/howto/choose-a-backend.md) and,
// in place of the API server's default-scheduler, the backend's scheduler
// (done on the pod, so the template hash and GitOps manifests stay as
// they are). False when the pod already names a group: it is left alone.
// No queue label: Volcano and KAI read the queue from a PodGroup that
// someone else made (spec.queue), and only their own PodGroup makers read
// it from pods.
bool LinkBackend(Backend backend, const nlohmann::json* meta, const nlohmann::json& spec,
                 const std::string& group, const workloadbuilder::ClusterFacts& facts,
                 JsonPatch& patch) {
  const nlohmann::json* annotations = Member(meta, "annotations");
  const nlohmann::json* labels = Member(meta, "labels");
  switch (backend) {
    case Backend::kNative: return false;
    case Backend::kVolcano:
      if (IsSet(Member(annotations, workloadbuilder::kVolcanoGroupAnnotation))) return false;
      AddToMap(meta, "annotations", {{workloadbuilder::kVolcanoGroupAnnotation, group}}, patch);
      break;
    case Backend::kKai:
      if (IsSet(Member(annotations, workloadbuilder::kKaiGroupAnnotation))) return false;
      AddToMap(meta, "annotations",
               {{workloadbuilder::kKaiGroupAnnotation, group},
                {workloadbuilder::kKaiSkipPodgrouperAnnotation, "true"}},
               patch);
      break;
    case Backend::kCoscheduling:
      if (IsSet(Member(labels, workloadbuilder::kCoschedulingGroupLabel))) return false;
      AddToMap(meta, "labels", {{workloadbuilder::kCoschedulingGroupLabel, group}}, patch);
      break;
  }
  const std::string_view scheduler = StringOr(Member(&spec, "schedulerName"));
  if (scheduler.empty() || scheduler == workloadbuilder::kDefaultSchedulerName) {
    patch.Add("/spec/schedulerName", workloadbuilder::SchedulerNameFor(backend, facts));
  }
  return true;
}

// Q23: the hold of a pod of `backend`. In scheduler mode the backend's
// scheduler keeps a pod whose group is missing out of scheduling, but only a
// pod that goes to that scheduler (native: default-scheduler, or none named;
// the others: the backend's scheduler, which LinkBackend writes in place of
// default-scheduler): a pod sent to any other scheduler keeps the gate. For
// native, also only while the Workload API is served (Options::
// native_api_served): otherwise the link does not survive admission.
PodHold HoldFor(Backend backend, const nlohmann::json& spec, const Options& options) {
  if (options.pod_hold.For(backend) == PodHold::kGate) return PodHold::kGate;
  std::string_view scheduler = StringOr(Member(&spec, "schedulerName"));
  const bool unnamed = scheduler.empty() || scheduler == workloadbuilder::kDefaultSchedulerName;
  if (backend == Backend::kNative) {
    return unnamed && options.native_api_served ? PodHold::kScheduler : PodHold::kGate;
  }
  const std::string_view holder =
      workloadbuilder::SchedulerNameFor(backend, options.backends.facts);
  if (unnamed) scheduler = holder;  // what LinkBackend writes
  return scheduler == holder ? PodHold::kScheduler : PodHold::kGate;
}

bool HasGate(const nlohmann::json& gates) {
  for (const nlohmann::json& g : gates) {
    if (StringOr(Member(&g, "name")) == kPodGroupGate) return true;
  }
  return false;
}

}  // namespace

Verdict MutatePod(const nlohmann::json& request, const Options& options) {
  Verdict v;
  if (StringOr(Member(&request, "operation")) != "CREATE") return v;
  const nlohmann::json* pod = Member(&request, "object");
  if (pod == nullptr || !pod->is_object()) {
    v.bad_request = "request.object must be an object for CREATE";
    return v;
  }
  const nlohmann::json* meta = Member(pod, "metadata");
  const nlohmann::json* labels = Member(meta, "labels");
  if (StringOr(Member(labels, kManagedLabel)) != "true") return v;
  const nlohmann::json* hash = Member(labels, kPodTemplateHashLabel);
  if (hash == nullptr || !hash->is_string()) return v;
  const ReplicaSetRef rs = ControllingReplicaSet(meta);
  if (rs.name.empty()) return v;
  const nlohmann::json* spec = Member(pod, "spec");
  if (spec == nullptr || !spec->is_object()) return v;
  // The backend stamped into the template by the Deployment webhook; absent
  // = native (a Deployment from before backends existed).
  const std::optional<Backend> backend = workloadbuilder::BackendOfLabels(OrNull(labels));
  if (!backend) {
    // Never a silent fall back to pod-by-pod scheduling: the ReplicaSet's
    // pods are refused until the label is a backend again.
    v.allowed = false;
    v.errors.push_back(workloadbuilder::NotSupported(
        workloadbuilder::FieldPath::Parse("metadata").Child("labels").Key(kBackendLabel),
        *Member(labels, kBackendLabel), BackendNames()));
    return v;
  }

  // Q12: one name per ReplicaSet incarnation, never the name of a PodGroup
  // left Terminating by an earlier ReplicaSet of the same name.
  if (*backend == Backend::kNative) {
    if (IsSet(Member(spec, "schedulingGroup"))) return v;  // already tied to a group: leave it
    v.patch.Add("/spec/schedulingGroup",
                {{"podGroupName", workloadbuilder::PodGroupName(rs.name, rs.uid)}});
  } else if (!LinkBackend(*backend, meta, *spec, workloadbuilder::PodGroupName(rs.name, rs.uid),
                          options.backends.facts, v.patch)) {
    return v;  // already tied to a group: leave it
  }
  const PodHold hold = HoldFor(*backend, *spec, options);
  if (!options.pod_scheduling_gate) {
    v.hold = "none";  // --pod-scheduling-gate=false
  } else if (hold == PodHold::kScheduler) {
    v.hold = "scheduler";
  } else {
    v.hold = "gate";
    const nlohmann::json gate = {{"name", kPodGroupGate}};
    const nlohmann::json* gates = Member(spec, "schedulingGates");
    if (gates == nullptr || !gates->is_array()) {
      v.patch.Add("/spec/schedulingGates", nlohmann::json::array({gate}));
    } else if (!HasGate(*gates)) {
      v.patch.Add("/spec/schedulingGates/-", gate);
    }
  }
  return v;
}

// The links to a Volcano or KAI PodGroup, and the pod's group, gates and
// scheduler.
const base::JsonPaths& MutatePodReads() {
  static const base::JsonPaths paths = {
      {"metadata", "annotations", std::string(workloadbuilder::kVolcanoGroupAnnotation)},
      {"metadata", "annotations", std::string(workloadbuilder::kKaiGroupAnnotation)},
      {"spec", "schedulingGroup"},
      {"spec", "schedulingGates"},
      {"spec", "schedulerName"},
  };
  return paths;
}

}  // namespace wasd::admission
