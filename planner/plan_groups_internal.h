// Shared by the PodGroup step's two files (planner/plan_podgroups.cc builds
// and keeps groups; planner/plan_foreign.cc reads their facts and handles
// foreign, Terminating and unneeded ones). Internal to planner/. Pure.
#ifndef WASD_PLANNER_PLAN_GROUPS_INTERNAL_H_
#define WASD_PLANNER_PLAN_GROUPS_INTERNAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/plan.h"
#include "workloadbuilder/backend.h"

namespace wasd::planner::internal {

using nlohmann::json;
using workloadbuilder::Backend;

// What the PodGroup step works from: the Deployment's ReplicaSets by UID,
// the observed PodGroups by name, and the PodGroup name each active
// ReplicaSet needs (Q12: its incarnation's).
struct PodGroupScene {
  std::map<std::string, const json*> rs_by_uid;
  std::map<std::string, const json*> pg_by_name;
  std::map<std::string, const json*> wanted;  // PodGroup name -> ReplicaSet
};

// The integer at JSON pointer `pointer` of `object`, if any.
std::optional<std::int64_t> IntAt(const json& object, std::string_view pointer);

// "PodGroup x" for native, "scheduling.volcano.sh PodGroup x" for the others.
std::string GroupWord(Backend backend);

// A PodGroup belongs to this Deployment when an ownerReference names our
// Workload by UID, or one of the Deployment's ReplicaSets controls it (by
// UID). Never by name or apiVersion: a name can be re-used by anyone, and
// an object read through v1 or v1beta1 is the same object. (A PodGroup of
// a re-created Workload is still controlled by our ReplicaSet.)
bool IsOurPodGroup(const json& pg, const json& workload,
                   const std::map<std::string, const json*>& rs_by_uid);

// A non-native group object wasd built for this Deployment whose ReplicaSet
// was deleted with propagationPolicy Orphan: it has no owner left, and only
// its label and annotation (backend_compile.h kDeploymentUidAnnotation) say
// whose it is. Deleted like a group whose ReplicaSet is gone.
bool IsOrphanedBackendGroup(const json& pg, const json& deployment);

bool Active(const json& rs);

// A group object of ours built before it carried wasd's marks (the
// wasd.io/managed label and the Deployment UID annotation): the patch that
// adds them (uid-tested), else nullopt. The reconciler's informer sees only
// labelled groups, so such a group shows up once, through the AlreadyExists
// answer to a create, and is marked then.
std::optional<json> ManagedMarksPatch(const json& pg, const json& deployment);

bool Finished(const json& pod);

// The pods that name PodGroup `pg_name` and have not finished.
std::vector<const json*> PodsNaming(const PlanInput& in, std::string_view pg_name);

// True while a pod that has not finished names the PodGroup: the
// podgroup-protection finalizer keeps a deleted PodGroup until then, and a
// pod created meanwhile (the ReplicaSet scaled up again) would name the dying
// object. So a PodGroup is deleted only once no such pod is left.
bool InUse(const PlanInput& in, std::string_view pg_name);

// A pod of wasd's that never ran: linked by wasd's webhook (gated, or marked
// wasd.io/managed) and never scheduled (objects::NeverScheduled), whatever
// its hold.
bool NeverRan(const json& pod);

// Q14: a Terminating PodGroup protects nothing when every unfinished pod that
// names it is one of wasd's that never ran: those pods cannot run while it
// is Terminating, and the podgroup-protection controller keeps it as long as
// they exist. Then (and only then) wasd may remove that finalizer itself.
bool ProtectsNothing(const PlanInput& in, std::string_view pg_name);

// Index of the podgroup-protection finalizer in the PodGroup, if present.
std::optional<std::size_t> ProtectionFinalizerIndex(const json& pg);

// A Terminating PodGroup that an active ReplicaSet needs (the name is its
// incarnation's, so this is the scale-to-zero/scale-up race of M6, or a
// PodGroup deleted by hand): recover when nothing is protected, else wait.
// Returns true when the plan waits.
bool PlanTerminating(const PlanInput& in, const std::string& pg_name, const json& pg,
                     const json& rs, Plan& plan);

PodGroupScene SceneOf(const PlanInput& in, const json& deployment);

// "(controller: ReplicaSet x)" or "(it has no controller)" for PodGroup `pg`.
std::string ControllerWords(const json& pg);

// `waiting`: how the pods that name it wait (HoldWords).
std::string ForeignMessage(const std::string& name, const json& pg, const std::string& waiting);

// The finalizers of `pg` other than podgroup-protection, "a, b".
std::string OtherFinalizers(const json& pg);

// The first pod that keeps a foreign Terminating PodGroup `pg_name` (Q14
// extended): one that ran or is bound, or one that is not of this
// Deployment's ReplicaSets. nullptr when only never-run gated pods of this
// Deployment name it.
const json* ForeignKeeper(const PlanInput& in, const PodGroupScene& scene,
                          std::string_view pg_name);

// Why a foreign Terminating PodGroup is not released (PlanForeignTerminating):
// `others` its finalizers besides podgroup-protection, `protection` whether it
// has that one, `keeper` the pod that keeps it (ForeignKeeper).
std::string WhatHolds(const std::string& others, bool protection, const json* keeper);

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
                            const std::string& pg_name, const json& pg, const json& rs, Plan& plan);

// Foreign objects first: a PodGroup with a needed name that is not ours
// stops every PodGroup write and gate lift of the Deployment. True when there
// is one (each gets a Warning Event, or is released when it is being
// deleted and only our never-run pods hold it).
bool PlanForeign(const PlanInput& in, const PodGroupScene& scene, const json& workload, Plan& plan);

// The PodGroupDeleted message: why PodGroup `name` goes (`rs`: its
// controlling ReplicaSet of this Deployment, or nullptr when gone).
std::string DeletedMessage(const std::string& name, const json* rs, bool rs_active);

// Deletions: our PodGroups that no active ReplicaSet needs (its ReplicaSet is
// at zero, Terminating or gone, or the PodGroup has a name of an earlier
// naming scheme), once no unfinished pod names them. The executor confirms
// with a live read of the ReplicaSet before it deletes (Q13).
void PlanDeletions(const PlanInput& in, const PodGroupScene& scene, const json& deployment,
                   const json& workload, Plan& plan);

}  // namespace wasd::planner::internal

#endif  // WASD_PLANNER_PLAN_GROUPS_INTERNAL_H_
