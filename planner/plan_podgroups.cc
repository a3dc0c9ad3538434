// The PodGroup and gate steps of PlanDeployment (plan.h, steps 2 and 3).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "planner/plan_internal.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/field_path.h"
#include "workloadbuilder/json_util.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner::internal {

using nlohmann::json;
using workloadbuilder::AsString;
using workloadbuilder::Backend;
using workloadbuilder::Member;

namespace {

// What the PodGroup step builds for: native (from our Workload, with its
// minCount and the claims it lost) or another backend (compiled from the
// Deployment's configuration; `workload` is then an empty object).
struct Target {
  Backend backend = Backend::kNative;
  const json& workload;
  std::optional<std::int64_t> min_count;  // native
  const std::vector<std::string>& missing_claims;
  const json* config = nullptr;  // non-native
  bool native() const { return backend == Backend::kNative; }
};

// The integer at JSON pointer `pointer` of `object`, if any.
std::optional<std::int64_t> IntAt(const json& object, std::string_view pointer) {
  const json::json_pointer ptr{std::string(pointer)};
  if (!object.contains(ptr)) return std::nullopt;
  return workloadbuilder::AsInt(&object.at(ptr));
}

// "PodGroup x" for native, "scheduling.volcano.sh PodGroup x" for the others.
std::string GroupWord(Backend backend) {
  if (backend == Backend::kNative) return "PodGroup";
  return std::string(workloadbuilder::Info(backend).api_group) + " PodGroup";
}

// A PodGroup belongs to this Deployment when an ownerReference names our
// Workload by UID, or one of the Deployment's ReplicaSets controls it (by
// UID). Never by name or apiVersion: a name can be re-used by anyone, and
// an object read through v1 or v1beta1 is the same object. (A PodGroup of
// a re-created Workload is still controlled by our ReplicaSet.)
bool IsOurPodGroup(const json& pg, const json& workload,
                   const std::map<std::string, const json*>& rs_by_uid) {
  const std::string workload_uid = UidOf(workload);
  if (!workload_uid.empty()) {
    const json* refs = workloadbuilder::MemberPath(pg, {"metadata", "ownerReferences"});
    if (refs != nullptr && refs->is_array()) {
      for (const json& ref : *refs) {
        const std::string* u = AsString(Member(ref, "uid"));
        if (u != nullptr && *u == workload_uid) return true;
      }
    }
  }
  const std::string controller = ControllerUid(pg);
  return !controller.empty() && rs_by_uid.count(controller) > 0;
}

// A non-native group object wasd built for this Deployment whose ReplicaSet
// was deleted with propagationPolicy Orphan: it has no owner left, and only
// its label and annotation (backend_compile.h kDeploymentUidAnnotation) say
// whose it is. Deleted like a group whose ReplicaSet is gone.
bool IsOrphanedBackendGroup(const json& pg, const json& deployment) {
  const json* owners = workloadbuilder::MemberPath(pg, {"metadata", "ownerReferences"});
  if (owners != nullptr && owners->is_array() && !owners->empty()) return false;
  const std::string* managed = AsString(
      workloadbuilder::MemberPath(pg, {"metadata", "labels", workloadbuilder::kManagedLabel}));
  const std::string* uid = AsString(workloadbuilder::MemberPath(
      pg, {"metadata", "annotations", workloadbuilder::kDeploymentUidAnnotation}));
  return managed != nullptr && *managed == "true" && uid != nullptr && !uid->empty() &&
         *uid == UidOf(deployment);
}

bool Active(const json& rs) { return ReplicasOf(rs) > 0 && !IsTerminating(rs); }

// A group object of ours built before it carried wasd's marks (the
// wasd.io/managed label and the Deployment UID annotation): the patch that
// adds them (uid-tested), else nullopt. The reconciler's informer sees only
// labelled groups, so such a group shows up once, through the AlreadyExists
// answer to a create, and is marked then.
std::optional<json> ManagedMarksPatch(const json& pg, const json& deployment) {
  json patch = json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", UidOf(pg)}}});
  const auto mark = [&](std::string_view member, std::string_view key, const std::string& value) {
    const json* map = workloadbuilder::MemberPath(pg, {"metadata", std::string(member)});
    const std::string* have = map != nullptr ? AsString(Member(*map, key)) : nullptr;
    if (have != nullptr && *have == value) return;
    const std::string path = "/metadata/" + std::string(member);
    if (map == nullptr || !map->is_object()) {
      patch.push_back({{"op", "add"}, {"path", path}, {"value", {{std::string(key), value}}}});
    } else {
      patch.push_back({{"op", "add"},
                       {"path", path + "/" + workloadbuilder::EscapeJsonPointerToken(key)},
                       {"value", value}});
    }
  };
  mark("labels", workloadbuilder::kManagedLabel, "true");
  mark("annotations", workloadbuilder::kDeploymentUidAnnotation, UidOf(deployment));
  if (patch.size() == 1) return std::nullopt;
  return patch;
}

bool Finished(const json& pod) {
  const std::string* phase = AsString(workloadbuilder::MemberPath(pod, {"status", "phase"}));
  return phase != nullptr && (*phase == "Succeeded" || *phase == "Failed");
}

// The pods that name PodGroup `pg_name` and have not finished.
std::vector<const json*> PodsNaming(const PlanInput& in, std::string_view pg_name) {
  std::vector<const json*> out;
  for (const Object& pod : in.pods) {
    if (pod == nullptr) continue;
    const std::string group = workloadbuilder::LinkedPodGroupName(*pod);
    if (group != pg_name || Finished(*pod)) continue;
    out.push_back(pod.get());
  }
  return out;
}

// True while a pod that has not finished names the PodGroup: the
// podgroup-protection finalizer keeps a deleted PodGroup until then, and a
// pod created meanwhile (the ReplicaSet scaled up again) would name the dying
// object. So a PodGroup is deleted only once no such pod is left.
bool InUse(const PlanInput& in, std::string_view pg_name) {
  return !PodsNaming(in, pg_name).empty();
}

// A pod that never ran: it still carries wasd's gate and was never bound to
// a node.
bool NeverRanGated(const json& pod) {
  if (!GateIndex(pod, workloadbuilder::kPodGroupGate)) return false;
  const std::string* node = AsString(workloadbuilder::MemberPath(pod, {"spec", "nodeName"}));
  return node == nullptr || node->empty();
}

// Q14: a Terminating PodGroup protects nothing when every unfinished pod that
// names it still carries wasd's gate and was never bound to a node: those
// pods never ran and cannot run while it is Terminating, and the
// podgroup-protection controller keeps it as long as they exist. Then (and
// only then) wasd may remove that finalizer itself.
bool ProtectsNothing(const PlanInput& in, std::string_view pg_name) {
  for (const json* pod : PodsNaming(in, pg_name)) {
    if (!NeverRanGated(*pod)) return false;
  }
  return true;
}

// Index of the podgroup-protection finalizer in the PodGroup, if present.
std::optional<std::size_t> ProtectionFinalizerIndex(const json& pg) {
  const json* finalizers = workloadbuilder::MemberPath(pg, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < finalizers->size(); ++i) {
    const std::string* f = AsString(&(*finalizers)[i]);
    if (f != nullptr && *f == kPodGroupProtectionFinalizer) return i;
  }
  return std::nullopt;
}

// A Terminating PodGroup that an active ReplicaSet needs (the name is its
// incarnation's, so this is the scale-to-zero/scale-up race of M6, or a
// PodGroup deleted by hand): recover when nothing is protected, else wait.
// Returns true when the plan waits.
bool PlanTerminating(const PlanInput& in, const std::string& pg_name, const json& pg,
                     const json& rs, Plan& plan) {
  const std::optional<std::size_t> finalizer = ProtectionFinalizerIndex(pg);
  if (finalizer && ProtectsNothing(in, pg_name)) {
    plan.actions.push_back(Action::ReleasePodGroup(pg_name, UidOf(pg), *finalizer));
    AddEvent(plan, "Normal", kReasonPodGroupReleased,
             "PodGroup " + pg_name + " is Terminating and only pods that never ran (still gated) " +
                 "name it: removed its " + std::string(kPodGroupProtectionFinalizer) +
                 " finalizer so that it is re-created for ReplicaSet " + NameOf(rs));
    plan.needs_replan = true;
    return true;
  }
  std::string message = "PodGroup " + pg_name;
  message
      .append(finalizer ? " is Terminating while pods that ran or are bound still name it (its "
                          "podgroup-protection finalizer waits for them)"
                        : " is Terminating, held by finalizers wasd does not own")
      .append("; it is re-created as soon as it is gone, and the new pods of ReplicaSet ")
      .append(NameOf(rs))
      .append(" stay gated until then");
  AddEvent(plan, "Warning", kReasonPodGroupTerminating, std::move(message));
  return true;
}

// What the PodGroup step works from: the Deployment's ReplicaSets by UID,
// the observed PodGroups by name, and the PodGroup name each active
// ReplicaSet needs (Q12: its incarnation's).
struct PodGroupScene {
  std::map<std::string, const json*> rs_by_uid;
  std::map<std::string, const json*> pg_by_name;
  std::map<std::string, const json*> wanted;  // PodGroup name -> ReplicaSet
};

PodGroupScene SceneOf(const PlanInput& in, const json& deployment) {
  PodGroupScene scene;
  const std::string deployment_uid = UidOf(deployment);
  for (const json* rs : SortedByName(in.replicasets)) {
    if (ControllerUid(*rs) != deployment_uid) continue;
    scene.rs_by_uid[UidOf(*rs)] = rs;
    if (Active(*rs)) {
      scene.wanted.emplace(workloadbuilder::PodGroupName(NameOf(*rs), UidOf(*rs)), rs);
    }
  }
  for (const json* pg : SortedByName(in.podgroups)) scene.pg_by_name.emplace(NameOf(*pg), pg);
  return scene;
}

// "(controller: ReplicaSet x)" or "(it has no controller)" for PodGroup `pg`.
std::string ControllerWords(const json& pg) {
  return ControllerUid(pg).empty()
             ? std::string("(it has no controller)")
             : "(controller: " + ControllerKind(pg) + " " + ControllerName(pg) + ")";
}

std::string ForeignMessage(const std::string& name, const json& pg) {
  return "PodGroup " + name + " exists but does not belong to this Deployment " +
         ControllerWords(pg) +
         "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates for "
         "this Deployment until it is removed";
}

// The finalizers of `pg` other than podgroup-protection, "a, b".
std::string OtherFinalizers(const json& pg) {
  std::string out;
  const json* finalizers = workloadbuilder::MemberPath(pg, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->is_array()) return out;
  for (const json& f : *finalizers) {
    const std::string* name = AsString(&f);
    if (name == nullptr || *name == kPodGroupProtectionFinalizer) continue;
    out += (out.empty() ? "" : ", ") + *name;
  }
  return out;
}

// The first pod that keeps a foreign Terminating PodGroup `pg_name` (Q14
// extended): one that ran or is bound, or one that is not of this
// Deployment's ReplicaSets. nullptr when only never-run gated pods of this
// Deployment name it.
const json* ForeignKeeper(const PlanInput& in, const PodGroupScene& scene,
                          std::string_view pg_name) {
  for (const json* pod : PodsNaming(in, pg_name)) {
    if (!NeverRanGated(*pod) || scene.rs_by_uid.count(ControllerUid(*pod)) == 0) return pod;
  }
  return nullptr;
}

// Why a foreign Terminating PodGroup is not released (PlanForeignTerminating):
// `others` its finalizers besides podgroup-protection, `protection` whether it
// has that one, `keeper` the pod that keeps it (ForeignKeeper).
std::string WhatHolds(const std::string& others, bool protection, const json* keeper) {
  if (!others.empty()) return "finalizers wasd does not own hold it (" + others + ")";
  if (!protection) return "it has not gone yet";
  if (keeper == nullptr) {
    return "its " + std::string(kPodGroupProtectionFinalizer) +
           " finalizer waits for the pods that name it";
  }
  return "pod " + NameOf(*keeper) +
         (NeverRanGated(*keeper) ? ", which is not this Deployment's,"
                                 : ", which is bound or no longer gated by wasd,") +
         " still names it (its " + std::string(kPodGroupProtectionFinalizer) +
         " finalizer waits for every pod that names it)";
}

// A foreign PodGroup with a needed name that is being deleted (the
// ForeignObject Event's advice taken). wasd's gated pods name it and keep
// its podgroup-protection finalizer forever, so it is released as ours are
// (Q14) when that finalizer is all that holds it and only never-run pods of
// this Deployment, still gated by wasd, name it — at least one (with none,
// kube's controller releases it, and pods outside wasd's caches may exist).
// The executor confirms the pods with a live list first. Otherwise a Warning
// says what holds it, and the plan looks again (pods of other owners send
// wasd no events).
void PlanForeignTerminating(const PlanInput& in, const PodGroupScene& scene,
                            const std::string& pg_name, const json& pg, const json& rs,
                            Plan& plan) {
  const std::optional<std::size_t> finalizer = ProtectionFinalizerIndex(pg);
  const std::string others = OtherFinalizers(pg);
  const json* keeper = ForeignKeeper(in, scene, pg_name);
  const bool named = !PodsNaming(in, pg_name).empty();
  if (finalizer && others.empty() && keeper == nullptr && named &&
      plan.backend == Backend::kNative) {
    std::vector<std::string> owners;
    for (const auto& entry : scene.rs_by_uid) owners.push_back(entry.first);
    plan.actions.push_back(
        Action::ReleaseForeignPodGroup(pg_name, UidOf(pg), *finalizer, std::move(owners)));
    AddEvent(plan, "Normal", kReasonPodGroupReleased,
             "PodGroup " + pg_name + " is someone else's " + ControllerWords(pg) +
                 " and is being deleted, and only pods of this Deployment that never ran (still "
                 "gated by " +
                 std::string(workloadbuilder::kPodGroupGate) + ") name it: removed its " +
                 std::string(kPodGroupProtectionFinalizer) +
                 " finalizer so that it can go; wasd then creates its own PodGroup for "
                 "ReplicaSet " +
                 NameOf(rs));
    plan.needs_replan = true;
    return;
  }
  const std::string why = WhatHolds(others, finalizer.has_value(), keeper);
  AddEvent(plan, "Warning", kReasonPodGroupTerminating,
           "PodGroup " + pg_name + " does not belong to this Deployment " + ControllerWords(pg) +
               " and is being deleted, but " + why +
               "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates for "
               "this Deployment until it is gone");
  AddRequeue(plan, kTerminatingRecheck);
}

// Foreign objects first: a PodGroup with a needed name that is not ours
// stops every PodGroup write and gate lift of the Deployment. True when there
// is one (each gets a Warning Event, or is released when it is being
// deleted and only our never-run pods hold it).
bool PlanForeign(const PlanInput& in, const PodGroupScene& scene, const json& workload,
                 Plan& plan) {
  bool foreign = false;
  for (const auto& [pg_name, rs] : scene.wanted) {
    const auto it = scene.pg_by_name.find(pg_name);
    if (it == scene.pg_by_name.end() || IsOurPodGroup(*it->second, workload, scene.rs_by_uid)) {
      continue;
    }
    foreign = true;
    if (IsTerminating(*it->second)) {
      PlanForeignTerminating(in, scene, pg_name, *it->second, *rs, plan);
    } else {
      AddEvent(plan, "Warning", kReasonForeignObject, ForeignMessage(pg_name, *it->second));
    }
  }
  if (foreign) plan.note = "foreign PodGroup";
  return foreign;
}

// The PodGroupDeleted message: why PodGroup `name` goes (`rs`: its
// controlling ReplicaSet of this Deployment, or nullptr when gone).
std::string DeletedMessage(const std::string& name, const json* rs, bool rs_active) {
  std::string why = "Deleted PodGroup " + name;
  if (rs == nullptr) {
    why += ": its ReplicaSet no longer exists";
  } else if (rs_active) {
    why.append(": ReplicaSet ")
        .append(NameOf(*rs))
        .append(" uses PodGroup ")
        .append(workloadbuilder::PodGroupName(NameOf(*rs), UidOf(*rs)))
        .append(" instead");
  } else {
    why.append(": ReplicaSet ").append(NameOf(*rs)).append(" has no replicas");
  }
  return why;
}

// Deletions: our PodGroups that no active ReplicaSet needs (its ReplicaSet is
// at zero, Terminating or gone, or the PodGroup has a name of an earlier
// naming scheme), once no unfinished pod names them. The executor confirms
// with a live read of the ReplicaSet before it deletes (Q13).
void PlanDeletions(const PlanInput& in, const PodGroupScene& scene, const json& deployment,
                   const json& workload, Plan& plan) {
  for (const auto& [name, pg] : scene.pg_by_name) {
    const bool ours = IsOurPodGroup(*pg, workload, scene.rs_by_uid) ||
                      (plan.backend != Backend::kNative && IsOrphanedBackendGroup(*pg, deployment));
    if (!ours || IsTerminating(*pg)) continue;
    if (scene.wanted.count(name) > 0) continue;
    if (InUse(in, name)) continue;  // deleted once its last pod is gone (pod events wake us)
    const auto rs = scene.rs_by_uid.find(ControllerUid(*pg));
    const json* owner = rs != scene.rs_by_uid.end() ? rs->second : nullptr;
    const bool rs_active = owner != nullptr && Active(*owner);
    // A superseded name: the ReplicaSet is active but needs another PodGroup.
    plan.actions.push_back(Action::DeletePodGroup(*pg, rs_active));
    AddEvent(plan, "Normal", kReasonPodGroupDeleted, DeletedMessage(name, owner, rs_active));
  }
}

// The members of `rs` that KAI counts as active in the ReplicaSet's group:
// naming it, bound to a node, not finished and not being deleted (a member
// another actor re-linked counts in the other group, not in ours).
std::int64_t ActiveMembers(const PlanInput& in, const json& rs) {
  const std::string rs_uid = UidOf(rs);
  const std::string pg_name = workloadbuilder::PodGroupName(NameOf(rs), rs_uid);
  std::int64_t n = 0;
  for (const Object& pod : in.pods) {
    if (pod == nullptr || ControllerUid(*pod) != rs_uid || IsTerminating(*pod) || Finished(*pod) ||
        workloadbuilder::LinkedPodGroupName(*pod, Backend::kKai) != pg_name) {
      continue;
    }
    const std::string* node = AsString(workloadbuilder::MemberPath(*pod, {"spec", "nodeName"}));
    if (node != nullptr && !node->empty()) ++n;
  }
  return n;
}

// KAI evicts every active member of a group whose active members stay below
// minMember longer than its staleness grace period (docs/backends.md "KAI:
// what a scale-up means"). So a derived minMember (no explicit minCount) of a
// group that already has active members never goes above them: it grows to
// `desired` only as the new members become active (KAI places members beyond
// minMember one by one). `current` is the stored value (nullopt: the group is
// being created). Other backends, an explicit minCount, and a lower value are
// `desired` unchanged.
std::int64_t KaiMinMember(const PlanInput& in, const json& rs, const Target& target,
                          std::int64_t desired, std::optional<std::int64_t> current) {
  if (target.backend != Backend::kKai || workloadbuilder::ExplicitMinCount(*target.config)) {
    return desired;
  }
  const std::int64_t active = ActiveMembers(in, rs);
  if (active == 0) return current ? std::min(desired, *current) : desired;
  return std::min(desired, std::max(current.value_or(active), active));
}

// The ClaimsStripped Warning that goes with a PodGroup create when the
// stored Workload lacks claims the Deployment asks for.
std::string ClaimsStrippedMessage(const json& workload, const std::string& pg_name,
                                  const std::vector<std::string>& missing_claims) {
  std::string names;
  for (const std::string& n : missing_claims) names += (names.empty() ? "" : ", ") + n;
  std::string warning = "Workload " + NameOf(workload);
  warning.append(" was stored without the resourceClaims the Deployment asks for (")
      .append(names)
      .append("), so PodGroup ")
      .append(pg_name)
      .append(
          " has none either: the API server dropped them (is the DRAWorkloadResourceClaims "
          "feature gate off?); pods still reference the claims by name");
  return warning;
}

// An active ReplicaSet without its PodGroup: create it, then lift the gates.
// The group object `target` wants for `rs`.
workloadbuilder::BuildResult BuildGroup(const PlanInput& in, const json& deployment, const json& rs,
                                        const Target& target) {
  if (target.native()) {
    return workloadbuilder::BuildPodGroup(target.workload, rs, in.scheduling_api_version);
  }
  return workloadbuilder::BuildBackendPodGroup(target.backend, deployment, *target.config, rs,
                                               in.facts);
}

void PlanCreatePodGroup(const PlanInput& in, const json& deployment, const std::string& pg_name,
                        const json& rs, const Target& target, Plan& plan) {
  workloadbuilder::BuildResult built = BuildGroup(in, deployment, rs, target);
  if (!built.ok()) {
    plan.note = "cannot build " + GroupWord(target.backend) + " " + pg_name + ": " + built.error;
    return;
  }
  std::optional<std::int64_t> min_count = target.min_count;
  if (!target.native()) {
    const json::json_pointer pointer{
        std::string(workloadbuilder::Info(target.backend).min_count_pointer)};
    min_count = IntAt(built.object, pointer.to_string());
    if (min_count) {
      *min_count = KaiMinMember(in, rs, target, *min_count, std::nullopt);
      built.object[pointer] = *min_count;
    }
  }
  const auto& missing_claims = target.missing_claims;
  const json& workload = target.workload;
  plan.actions.push_back(
      Action::CreatePodGroup(pg_name, std::move(built.object), min_count.value_or(0)));
  std::string message = "Created " + GroupWord(target.backend) + " " + pg_name;
  message.append(" for ReplicaSet ").append(NameOf(rs));
  if (!target.native()) {
    message.append(" (minMember ").append(std::to_string(min_count.value_or(0))).append(")");
  } else if (min_count) {
    message.append(" (gang, minCount ").append(std::to_string(*min_count)).append(")");
  } else {
    message.append(" (basic)");
  }
  AddEvent(plan, "Normal", kReasonPodGroupCreated, std::move(message));
  if (!missing_claims.empty()) {
    AddEvent(plan, "Warning", kReasonClaimsStripped,
             ClaimsStrippedMessage(workload, pg_name, missing_claims));
  }
  AddLiftGates(in, rs, plan);
}

// A non-native group object's minMember follows the compiled one (explicit
// minCount, else the Deployment's replicas; on KAI see KaiMinMember). At zero
// replicas the Deployment is on its way down (or its update is behind): the
// value is kept.
void PlanBackendMinCount(const PlanInput& in, const json& deployment, const std::string& pg_name,
                         const json& pg, const json& rs, const Target& target, Plan& plan) {
  if (ReplicasOf(deployment) == 0 && !workloadbuilder::ExplicitMinCount(*target.config)) return;
  const workloadbuilder::BuildResult built = BuildGroup(in, deployment, rs, target);
  if (!built.ok()) {
    plan.note = "cannot build " + GroupWord(target.backend) + " " + pg_name + ": " + built.error;
    return;
  }
  const std::string_view pointer = workloadbuilder::Info(target.backend).min_count_pointer;
  std::optional<std::int64_t> desired = IntAt(built.object, pointer);
  if (desired) *desired = KaiMinMember(in, rs, target, *desired, IntAt(pg, pointer));
  if (desired && IntAt(pg, pointer) != desired) {
    plan.actions.push_back(Action::PatchPodGroupMinCount(pg_name, UidOf(pg), *desired, pointer));
  }
}

// An active ReplicaSet with its (live) PodGroup: adopt it, keep minCount and
// the Workload reference in step, then lift the gates.
void PlanKeepInStep(const PlanInput& in, const json& deployment, const std::string& pg_name,
                    const json& pg, const json& rs, const Target& target, Plan& plan) {
  if (ControllerUid(pg) != UidOf(rs)) {
    // Ours (it references our Workload) under this incarnation's name but
    // controlled by nothing alive: the ReplicaSet takes it, as it adopts
    // orphans.
    plan.actions.push_back(
        Action::PatchPodGroupOwners(pg_name, UidOf(pg), PodGroupAdoptPatch(pg, rs)));
  }
  if (!target.native()) {
    if (std::optional<json> marks = ManagedMarksPatch(pg, deployment)) {
      plan.actions.push_back(Action::PatchPodGroupOwners(pg_name, UidOf(pg), std::move(*marks)));
    }
    PlanBackendMinCount(in, deployment, pg_name, pg, rs, target, plan);
    AddLiftGates(in, rs, plan);
    return;
  }
  const json& workload = target.workload;
  const std::optional<std::int64_t> min_count = target.min_count;
  const json* spec = workloadbuilder::Member(pg, "spec");
  if (min_count && (spec == nullptr || GangMinCount(*spec) != min_count)) {
    plan.actions.push_back(Action::PatchPodGroupMinCount(pg_name, UidOf(pg), *min_count));
  }
  const OwnerRefAt wref = FindOwnerRef(pg, "Workload");
  const std::string* wref_uid = wref.ref != nullptr ? AsString(Member(*wref.ref, "uid")) : nullptr;
  if (wref_uid == nullptr || *wref_uid != UidOf(workload)) {
    plan.actions.push_back(Action::PatchPodGroupOwners(
        pg_name, UidOf(pg), PodGroupOwnerPatch(pg, workload, in.scheduling_api_version)));
  }
  AddLiftGates(in, rs, plan);
}

}  // namespace

void AddLiftGates(const PlanInput& in, const json& rs, Plan& plan) {
  const std::string rs_uid = UidOf(rs);
  for (const json* pod : SortedByName(in.pods)) {
    if (ControllerUid(*pod) != rs_uid || IsTerminating(*pod)) continue;
    const std::optional<std::size_t> index = GateIndex(*pod, workloadbuilder::kPodGroupGate);
    if (!index) continue;
    plan.actions.push_back(Action::LiftGate(NameOf(*pod), UidOf(*pod), *index));
  }
}

Release ReleaseAllGates(const PlanInput& in, const json& deployment, Plan& plan) {
  Release out;
  const std::string deployment_uid = UidOf(deployment);
  const std::optional<Backend> backend = BackendOf(deployment);
  plan.backend = backend.value_or(Backend::kNative);
  std::set<std::string> existing;
  for (const Object& pg : in.podgroups) {
    if (pg != nullptr) existing.insert(NameOf(*pg));
  }
  for (const json* rs : SortedByName(in.replicasets)) {
    if (ControllerUid(*rs) != deployment_uid) continue;
    const std::size_t before = plan.actions.size();
    AddLiftGates(in, *rs, plan);
    const std::size_t lifted = plan.actions.size() - before;
    if (lifted == 0) continue;
    out.lifted += lifted;
    // The pods name their ReplicaSet's group (the webhook linked them): no
    // scheduler places a pod whose group does not exist.
    const std::string pg_name = workloadbuilder::PodGroupName(NameOf(*rs), UidOf(*rs));
    if (existing.count(pg_name) > 0) continue;
    workloadbuilder::BuildResult built =
        backend ? workloadbuilder::BuildReleaseGroup(*backend, deployment, *rs, in.facts,
                                                     in.scheduling_api_version)
                : workloadbuilder::BuildResult{nullptr, "the backend label names no backend"};
    if (!built.ok()) {
      out.missing.push_back(pg_name);
      continue;
    }
    const std::int64_t min_count = *backend == Backend::kNative ? 0 : 1;
    plan.actions.insert(plan.actions.begin() + static_cast<std::ptrdiff_t>(before),
                        Action::CreatePodGroup(pg_name, std::move(built.object), min_count));
    out.created.push_back(GroupWord(*backend) + " " + pg_name);
  }
  return out;
}

namespace {

// Where backend `b` keeps a pod's link, for messages.
std::string LinkWords(Backend b) {
  switch (b) {
    case Backend::kVolcano:
      return "annotation " + std::string(workloadbuilder::kVolcanoGroupAnnotation);
    case Backend::kKai: return "annotation " + std::string(workloadbuilder::kKaiGroupAnnotation);
    case Backend::kCoscheduling:
      return "label " + std::string(workloadbuilder::kCoschedulingGroupLabel);
    case Backend::kNative: break;
  }
  return "spec.schedulingGroup.podGroupName";
}

// M3: members of `rs` whose link names another group than `pg_name` (wasd's
// webhook linked them to it; another actor changed the link since). They are
// still the ReplicaSet's (gates, counts); a Warning per pod names the change.
void WarnRelinked(const PlanInput& in, Backend backend, const std::string& pg_name, const json& rs,
                  Plan& plan) {
  const std::string rs_uid = UidOf(rs);
  for (const json* pod : SortedByName(in.pods)) {
    if (ControllerUid(*pod) != rs_uid || IsTerminating(*pod) || Finished(*pod)) continue;
    const std::string linked = workloadbuilder::LinkedPodGroupName(*pod, backend);
    if (linked.empty() || linked == pg_name) continue;
    std::string message = "Pod " + NameOf(*pod) + " of ReplicaSet " + NameOf(rs) + " names " +
                          GroupWord(backend) + " " + linked + " instead of " + pg_name +
                          ", which wasd made for it: another actor changed its " +
                          LinkWords(backend) + ". wasd still counts it as a member of ReplicaSet " +
                          NameOf(rs) + ", but the scheduler places it in " + linked +
                          ", outside the gang";
    if (backend == Backend::kKai) {
      message += " (KAI's podgrouper before v0.15.0 ignores " +
                 std::string(workloadbuilder::kKaiSkipPodgrouperAnnotation) +
                 " and rewrites the link: wasd needs KAI v0.15.0 or later)";
    }
    AddEvent(plan, "Warning", kReasonMemberRelinked, std::move(message));
  }
}

void PlanGroups(const PlanInput& in, const json& deployment, const Target& target, Plan& plan) {
  const json& workload = target.workload;
  const PodGroupScene scene = SceneOf(in, deployment);
  if (PlanForeign(in, scene, workload, plan)) return;
  PlanDeletions(in, scene, deployment, workload, plan);

  // Active ReplicaSets: create, keep in step, lift gates.
  bool waiting = false;
  bool stale = false;
  for (const auto& [pg_name, rs] : scene.wanted) {
    const auto it = scene.pg_by_name.find(pg_name);
    if (it == scene.pg_by_name.end() && ReplicasOf(deployment) == 0) {
      // The minCount of a Deployment at zero is the one it had before; a
      // PodGroup created with it would hold a smaller gang until patched.
      plan.note = "ReplicaSet " + NameOf(*rs) + " has replicas while the Deployment has none; " +
                  "waiting for the Deployment's update";
      stale = true;
    } else if (it == scene.pg_by_name.end()) {
      PlanCreatePodGroup(in, deployment, pg_name, *rs, target, plan);
    } else if (IsTerminating(*it->second)) {
      waiting = PlanTerminating(in, pg_name, *it->second, *rs, plan) || waiting;
    } else {
      PlanKeepInStep(in, deployment, pg_name, *it->second, *rs, target, plan);
    }
    if (!target.native()) WarnRelinked(in, target.backend, pg_name, *rs, plan);
  }
  if (waiting) AddRequeue(plan, kTerminatingRecheck);
  if (stale) AddRequeue(plan, kStaleDeploymentRecheck);
}

}  // namespace

void PlanPodGroups(const PlanInput& in, const json& deployment, const json& workload,
                   std::optional<std::int64_t> min_count,
                   const std::vector<std::string>& missing_claims, Plan& plan) {
  PlanGroups(in, deployment, Target{Backend::kNative, workload, min_count, missing_claims}, plan);
}

void PlanBackendGroups(const PlanInput& in, const json& deployment, const json& config,
                       Backend backend, Plan& plan) {
  static const json kNoWorkload = json::object();
  static const std::vector<std::string> kNoClaims;
  PlanGroups(in, deployment, Target{backend, kNoWorkload, std::nullopt, kNoClaims, &config}, plan);
}

}  // namespace wasd::planner::internal
