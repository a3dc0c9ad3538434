#include "admission/handlers.h"
#include "admission/json_access.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::admission {

namespace {

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
  if (IsSet(Member(spec, "schedulingGroup"))) return v;  // already tied to a group: leave it

  // Q12: one name per ReplicaSet incarnation, never the name of a PodGroup
  // left Terminating by an earlier ReplicaSet of the same name.
  v.patch.Add("/spec/schedulingGroup",
              {{"podGroupName", workloadbuilder::PodGroupName(rs.name, rs.uid)}});
  if (options.pod_scheduling_gate) {
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

}  // namespace wasd::admission
