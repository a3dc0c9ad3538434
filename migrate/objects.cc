#include "migrate/objects.h"

#include <algorithm>
#include <cstdint>

#include "objects/json_util.h"
#include "objects/object_util.h"

namespace wasd::migrate {
namespace {

using nlohmann::json;
using objects::AsInt;
using objects::AsString;
using objects::Member;
using objects::MemberPath;

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// True when any ownerReference of `object` has a uid in `uids`.
bool OwnedByAny(const json& object, const std::vector<std::string>& uids) {
  const json* refs = MemberPath(object, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array()) return false;
  for (const json& r : *refs) {
    if (const std::string* uid = AsString(Member(r, "uid"));
        uid != nullptr && Contains(uids, *uid)) {
      return true;
    }
  }
  return false;
}

ObjectRef RefOf(std::string kind, const json& object) {
  return {std::move(kind), objects::NameOf(object), objects::UidOf(object)};
}

std::int64_t IntAt(const json& object, std::initializer_list<std::string_view> path,
                   std::int64_t otherwise) {
  return AsInt(MemberPath(object, path)).value_or(otherwise);
}

}  // namespace

std::vector<ObjectRef> Owned::All() const {
  std::vector<ObjectRef> out = replicasets;
  out.insert(out.end(), workloads.begin(), workloads.end());
  out.insert(out.end(), podgroups.begin(), podgroups.end());
  return out;
}

std::string Owned::Text() const {
  std::string out;
  for (const ObjectRef& r : All()) out += (out.empty() ? "" : ", ") + r.Text();
  return out.empty() ? "none" : out;
}

Owned OwnedBy(std::string_view deployment_uid,
              const std::vector<std::string>& known_replicaset_uids,
              const std::vector<json>& replicasets, const std::vector<json>& workloads,
              const std::vector<json>& podgroups) {
  Owned o;
  if (deployment_uid.empty()) return o;
  std::vector<std::string> rs_uids = known_replicaset_uids;
  for (const json& rs : replicasets) {
    if (objects::UidOf(rs).empty() || objects::ControllerUid(rs) != deployment_uid) continue;
    o.replicasets.push_back(RefOf("ReplicaSet", rs));
    if (!Contains(rs_uids, o.replicasets.back().uid)) rs_uids.push_back(o.replicasets.back().uid);
  }
  std::vector<std::string> workload_uids;
  for (const json& w : workloads) {
    if (objects::UidOf(w).empty() || objects::ControllerUid(w) != deployment_uid) continue;
    o.workloads.push_back(RefOf("Workload", w));
    workload_uids.push_back(o.workloads.back().uid);
  }
  for (const json& pg : podgroups) {
    if (objects::UidOf(pg).empty()) continue;
    if (Contains(rs_uids, objects::ControllerUid(pg)) || OwnedByAny(pg, workload_uids)) {
      o.podgroups.push_back(RefOf("PodGroup", pg));
    }
  }
  return o;
}

namespace {

// spec.controllerRef of Workload `w` names Deployment `name` (uid `uid`).
bool ControllerRefNames(const json& w, std::string_view name, std::string_view uid) {
  const json* ref = MemberPath(w, {"spec", "controllerRef"});
  if (ref == nullptr || !ref->is_object()) return false;
  const std::string* kind = AsString(Member(*ref, "kind"));
  const std::string* ref_name = AsString(Member(*ref, "name"));
  const std::string* group = AsString(Member(*ref, "apiGroup"));
  const std::string* ref_uid = AsString(Member(*ref, "uid"));
  return kind != nullptr && *kind == "Deployment" && ref_name != nullptr && *ref_name == name &&
         (group == nullptr || group->empty() || *group == "apps") &&
         (ref_uid == nullptr || ref_uid->empty() || *ref_uid == uid);
}

}  // namespace

Owned InTreeOwnedBy(std::string_view deployment_name, std::string_view deployment_uid,
                    const std::vector<json>& replicasets, const std::vector<json>& workloads,
                    const std::vector<json>& podgroups) {
  Owned o = OwnedBy(deployment_uid, {}, replicasets, workloads, podgroups);
  std::vector<std::string> workload_names;
  for (const ObjectRef& r : o.workloads) workload_names.push_back(r.name);
  for (const json& w : workloads) {
    if (objects::UidOf(w).empty() || objects::ControllerUid(w) == deployment_uid ||
        !ControllerRefNames(w, deployment_name, deployment_uid)) {
      continue;
    }
    o.workloads.push_back(RefOf("Workload", w));
    workload_names.push_back(o.workloads.back().name);
  }
  for (const json& pg : podgroups) {
    const std::string* ref = AsString(MemberPath(pg, {"spec", "workloadRef", "name"}));
    if (objects::UidOf(pg).empty() || ref == nullptr || !Contains(workload_names, *ref)) continue;
    const std::string uid = objects::UidOf(pg);
    bool seen = false;
    for (const ObjectRef& r : o.podgroups) seen = seen || r.uid == uid;
    if (!seen) o.podgroups.push_back(RefOf("PodGroup", pg));
  }
  return o;
}

std::string NotAvailableWhy(const json& d) {
  const std::int64_t want = objects::ReplicasOf(d);
  const std::int64_t generation = IntAt(d, {"metadata", "generation"}, 0);
  const std::int64_t observed = IntAt(d, {"status", "observedGeneration"}, -1);
  if (observed < generation) return "the Deployment controller has not seen the new spec yet";
  const std::int64_t updated = IntAt(d, {"status", "updatedReplicas"}, 0);
  const std::int64_t available = IntAt(d, {"status", "availableReplicas"}, 0);
  const std::int64_t total = IntAt(d, {"status", "replicas"}, 0);
  if (updated < want) {
    return std::to_string(updated) + " of " + std::to_string(want) + " replicas created";
  }
  if (available < want) {
    return std::to_string(available) + " of " + std::to_string(want) + " replicas available";
  }
  if (total > want) return std::to_string(total - want) + " old replicas still terminating";
  const json* conds = MemberPath(d, {"status", "conditions"});
  if (conds != nullptr && conds->is_array()) {
    for (const json& c : *conds) {
      const std::string* type = AsString(Member(c, "type"));
      if (type == nullptr || *type != "Available") continue;
      const std::string* status = AsString(Member(c, "status"));
      if (status != nullptr && *status == "True") return "";
      const std::string* msg = AsString(Member(c, "message"));
      return "condition Available is not True" + (msg ? ": " + *msg : std::string());
    }
  }
  return "no condition Available yet";
}

}  // namespace wasd::migrate
