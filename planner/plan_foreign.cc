// The facts of a Deployment's group objects that the PodGroup step reads
// (whose a group is, who names it, what protects it), and the groups wasd
// does not own or that are going away: foreign groups, Terminating ones and
// the deletions of groups no ReplicaSet needs (plan.h, step 2).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "objects/json_util.h"
#include "planner/plan_groups_internal.h"
#include "planner/plan_internal.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/field_path.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/pod_holds.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner::internal {

using nlohmann::json;
using objects::AsString;
using objects::Member;
using workloadbuilder::Backend;

// The integer at JSON pointer `pointer` of `object`, if any.
std::optional<std::int64_t> IntAt(const json& object, std::string_view pointer) {
  const json::json_pointer ptr{std::string(pointer)};
  if (!object.contains(ptr)) return std::nullopt;
  return objects::AsInt(&object.at(ptr));
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
  const std::string workload_uid = objects::UidOf(workload);
  if (!workload_uid.empty()) {
    const json* refs = objects::MemberPath(pg, {"metadata", "ownerReferences"});
    if (refs != nullptr && refs->is_array()) {
      for (const json& ref : *refs) {
        const std::string* u = AsString(Member(ref, "uid"));
        if (u != nullptr && *u == workload_uid) return true;
      }
    }
  }
  const std::string controller = objects::ControllerUid(pg);
  return !controller.empty() && rs_by_uid.count(controller) > 0;
}

// A non-native group object wasd built for this Deployment whose ReplicaSet
// was deleted with propagationPolicy Orphan: it has no owner left, and only
// its label and annotation (backend_compile.h kDeploymentUidAnnotation) say
// whose it is. Deleted like a group whose ReplicaSet is gone.
bool IsOrphanedBackendGroup(const json& pg, const json& deployment) {
  const json* owners = objects::MemberPath(pg, {"metadata", "ownerReferences"});
  if (owners != nullptr && owners->is_array() && !owners->empty()) return false;
  const std::string* managed =
      AsString(objects::MemberPath(pg, {"metadata", "labels", workloadbuilder::kManagedLabel}));
  const std::string* uid = AsString(objects::MemberPath(
      pg, {"metadata", "annotations", workloadbuilder::kDeploymentUidAnnotation}));
  return managed != nullptr && *managed == "true" && uid != nullptr && !uid->empty() &&
         *uid == objects::UidOf(deployment);
}

bool Active(const json& rs) { return objects::ReplicasOf(rs) > 0 && !objects::IsTerminating(rs); }

// A group object of ours built before it carried wasd's marks (the
// wasd.io/managed label and the Deployment UID annotation): the patch that
// adds them (uid-tested), else nullopt. The reconciler's informer sees only
// labelled groups, so such a group shows up once, through the AlreadyExists
// answer to a create, and is marked then.
std::optional<json> ManagedMarksPatch(const json& pg, const json& deployment) {
  json patch =
      json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", objects::UidOf(pg)}}});
  const auto mark = [&](std::string_view member, std::string_view key, const std::string& value) {
    const json* map = objects::MemberPath(pg, {"metadata", std::string(member)});
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
  mark("annotations", workloadbuilder::kDeploymentUidAnnotation, objects::UidOf(deployment));
  if (patch.size() == 1) return std::nullopt;
  return patch;
}

bool Finished(const json& pod) {
  const std::string* phase = AsString(objects::MemberPath(pod, {"status", "phase"}));
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

// A pod of wasd's that never ran: the webhook linked it (it carries wasd's
// gate, or wasd's marker label from the pod template) and it was never
// placed (no node, no PodScheduled=True). Whichever hold it got, gate or
// scheduler, it has not started and cannot run while its group is
// Terminating.
bool NeverRan(const json& pod) { return workloadbuilder::WasdPodNeverRan(pod); }

// Q14: a Terminating PodGroup protects nothing when every unfinished pod that
// names it is one of wasd's that never ran (NeverRan): the
// podgroup-protection controller keeps it as long as they exist. Then (and
// only then) wasd may remove that finalizer itself.
bool ProtectsNothing(const PlanInput& in, std::string_view pg_name) {
  for (const json* pod : PodsNaming(in, pg_name)) {
    if (!NeverRan(*pod)) return false;
  }
  return true;
}

// The pods of `rs` that name `pg_name` and wait, as HoldWords counts them.
std::string WaitingWords(const PlanInput& in, const std::string& pg_name, const json& rs,
                         Backend backend) {
  std::vector<const json*> pods;
  const std::string rs_uid = objects::UidOf(rs);
  for (const Object& pod : in.pods) {
    if (pod != nullptr && objects::ControllerUid(*pod) == rs_uid) pods.push_back(pod.get());
  }
  return workloadbuilder::HoldWords(workloadbuilder::CountHolds(pods, backend),
                                    GroupWord(backend) + " " + pg_name);
}

// Index of the podgroup-protection finalizer in the PodGroup, if present.
std::optional<std::size_t> ProtectionFinalizerIndex(const json& pg) {
  const json* finalizers = objects::MemberPath(pg, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < finalizers->size(); ++i) {
    const std::string* f = AsString(&(*finalizers)[i]);
    if (f != nullptr && *f == objects::kPodGroupProtectionFinalizer) return i;
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
    plan.actions.push_back(Action::ReleasePodGroup(pg_name, objects::UidOf(pg), *finalizer));
    // A Warning: wasd writes a finalizer it does not own (L2), and Normal
    // Events are off by default.
    AddEvent(plan, "Warning", kReasonPodGroupReleased,
             "PodGroup " + pg_name + " is Terminating and only pods of wasd's that never ran " +
                 "(never scheduled) name it: removed its " +
                 std::string(objects::kPodGroupProtectionFinalizer) +
                 " finalizer so that it is re-created for ReplicaSet " + objects::NameOf(rs));
    plan.needs_replan = true;
    return true;
  }
  std::string message = "PodGroup " + pg_name;
  message
      .append(finalizer ? " is Terminating while pods that ran or are bound still name it (its "
                          "podgroup-protection finalizer waits for them)"
                        : " is Terminating, held by finalizers wasd does not own")
      .append("; it is re-created for ReplicaSet ")
      .append(objects::NameOf(rs))
      .append(" as soon as it is gone. Meanwhile: ")
      .append(WaitingWords(in, pg_name, rs, Backend::kNative));
  AddEvent(plan, "Warning", kReasonPodGroupTerminating, std::move(message));
  return true;
}

PodGroupScene SceneOf(const PlanInput& in, const json& deployment) {
  PodGroupScene scene;
  const std::string deployment_uid = objects::UidOf(deployment);
  for (const json* rs : SortedByName(in.replicasets)) {
    if (objects::ControllerUid(*rs) != deployment_uid) continue;
    scene.rs_by_uid[objects::UidOf(*rs)] = rs;
    if (Active(*rs)) {
      scene.wanted.emplace(workloadbuilder::PodGroupName(objects::NameOf(*rs), objects::UidOf(*rs)),
                           rs);
    }
  }
  for (const json* pg : SortedByName(in.podgroups))
    scene.pg_by_name.emplace(objects::NameOf(*pg), pg);
  return scene;
}

// "(controller: ReplicaSet x)" or "(it has no controller)" for PodGroup `pg`.
std::string ControllerWords(const json& pg) {
  return objects::ControllerUid(pg).empty() ? std::string("(it has no controller)")
                                            : "(controller: " + objects::ControllerKind(pg) + " " +
                                                  objects::ControllerName(pg) + ")";
}

std::string ForeignMessage(const std::string& name, const json& pg, const std::string& waiting) {
  return "PodGroup " + name + " exists but does not belong to this Deployment " +
         ControllerWords(pg) +
         "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates for "
         "this Deployment until it is removed (delete it, or rename the Deployment). "
         "Meanwhile: " +
         waiting;
}

// The finalizers of `pg` other than podgroup-protection, "a, b".
std::string OtherFinalizers(const json& pg) {
  std::string out;
  const json* finalizers = objects::MemberPath(pg, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->is_array()) return out;
  for (const json& f : *finalizers) {
    const std::string* name = AsString(&f);
    if (name == nullptr || *name == objects::kPodGroupProtectionFinalizer) continue;
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
    if (!NeverRan(*pod) || scene.rs_by_uid.count(objects::ControllerUid(*pod)) == 0) return pod;
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
    return "its " + std::string(objects::kPodGroupProtectionFinalizer) +
           " finalizer waits for the pods that name it";
  }
  return "pod " + objects::NameOf(*keeper) +
         (NeverRan(*keeper) ? ", which is not this Deployment's," : ", which is bound or ran,") +
         " still names it (its " + std::string(objects::kPodGroupProtectionFinalizer) +
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
        Action::ReleaseForeignPodGroup(pg_name, objects::UidOf(pg), *finalizer, std::move(owners)));
    AddEvent(plan, "Warning", kReasonPodGroupReleased,
             "PodGroup " + pg_name + " is someone else's " + ControllerWords(pg) +
                 " and is being deleted, and only pods of this Deployment that never ran (never "
                 "scheduled) name it: removed its " +
                 std::string(objects::kPodGroupProtectionFinalizer) +
                 " finalizer so that it can go; wasd then creates its own PodGroup for "
                 "ReplicaSet " +
                 objects::NameOf(rs));
    plan.needs_replan = true;
    return;
  }
  const std::string why = WhatHolds(others, finalizer.has_value(), keeper);
  AddEvent(plan, "Warning", kReasonPodGroupTerminating,
           "PodGroup " + pg_name + " does not belong to this Deployment " + ControllerWords(pg) +
               " and is being deleted, but " + why +
               "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates for "
               "this Deployment until it is gone. Meanwhile: " +
               WaitingWords(in, pg_name, rs, plan.backend));
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
    if (objects::IsTerminating(*it->second)) {
      PlanForeignTerminating(in, scene, pg_name, *it->second, *rs, plan);
    } else {
      AddEvent(plan, "Warning", kReasonForeignObject,
               ForeignMessage(pg_name, *it->second, WaitingWords(in, pg_name, *rs, plan.backend)));
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
        .append(objects::NameOf(*rs))
        .append(" uses PodGroup ")
        .append(workloadbuilder::PodGroupName(objects::NameOf(*rs), objects::UidOf(*rs)))
        .append(" instead");
  } else {
    why.append(": ReplicaSet ").append(objects::NameOf(*rs)).append(" has no replicas");
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
    if (!ours || objects::IsTerminating(*pg)) continue;
    if (scene.wanted.count(name) > 0) continue;
    if (InUse(in, name)) continue;  // deleted once its last pod is gone (pod events wake us)
    const auto rs = scene.rs_by_uid.find(objects::ControllerUid(*pg));
    const json* owner = rs != scene.rs_by_uid.end() ? rs->second : nullptr;
    const bool rs_active = owner != nullptr && Active(*owner);
    // A superseded name: the ReplicaSet is active but needs another PodGroup.
    plan.actions.push_back(Action::DeletePodGroup(*pg, rs_active));
    AddEvent(plan, "Normal", kReasonPodGroupDeleted, DeletedMessage(name, owner, rs_active));
  }
}

}  // namespace wasd::planner::internal
