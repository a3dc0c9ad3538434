// The PodGroup and gate steps of PlanDeployment (plan.h, steps 2 and 3).
#include <map>
#include <set>
#include <string>

#include "reconciler/plan_internal.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/json_util.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::reconciler::internal {

using nlohmann::json;
using workloadbuilder::AsString;
using workloadbuilder::Member;

namespace {

// A PodGroup belongs to this Deployment when it references our Workload (by
// name or UID: a re-created Workload keeps its name) or one of the
// Deployment's ReplicaSets controls it.
bool IsOurPodGroup(const json& pg, const json& workload,
                   const std::map<std::string, const json*>& rs_by_uid) {
  const OwnerRefAt ref = FindOwnerRef(pg, "Workload");
  if (ref.ref != nullptr) {
    const std::string* n = AsString(Member(*ref.ref, "name"));
    const std::string* u = AsString(Member(*ref.ref, "uid"));
    if ((n != nullptr && *n == NameOf(workload)) || (u != nullptr && *u == UidOf(workload))) {
      return true;
    }
  }
  const std::string controller = ControllerUid(pg);
  return !controller.empty() && rs_by_uid.count(controller) > 0;
}

bool Active(const json& rs) { return ReplicasOf(rs) > 0 && !IsTerminating(rs); }

// True while a pod that has not finished names the PodGroup: the
// podgroup-protection finalizer keeps a deleted PodGroup until then, and a
// pod created meanwhile (the ReplicaSet scaled up again) would name the dying
// object and hold it forever. So a PodGroup is deleted only once no such pod
// is left.
bool InUse(const PlanInput& in, std::string_view pg_name) {
  for (const Object& pod : in.pods) {
    if (pod == nullptr) continue;
    const std::string* group =
        AsString(workloadbuilder::MemberPath(*pod, {"spec", "schedulingGroup", "podGroupName"}));
    if (group == nullptr || *group != pg_name) continue;
    const std::string* phase = AsString(workloadbuilder::MemberPath(*pod, {"status", "phase"}));
    if (phase == nullptr || (*phase != "Succeeded" && *phase != "Failed")) return true;
  }
  return false;
}

void AddLiftGates(const PlanInput& in, const json& rs, Plan& plan) {
  const std::string rs_uid = UidOf(rs);
  for (const json* pod : SortedByName(in.pods)) {
    if (ControllerUid(*pod) != rs_uid || IsTerminating(*pod)) continue;
    const std::optional<std::size_t> index = GateIndex(*pod, workloadbuilder::kPodGroupGate);
    if (!index) continue;
    Action lift;
    lift.kind = ActionKind::kLiftGate;
    lift.name = NameOf(*pod);
    lift.uid = UidOf(*pod);
    lift.gate_index = *index;
    lift.patch = LiftGatePatch(*index);
    plan.actions.push_back(std::move(lift));
  }
}

}  // namespace

void PlanPodGroups(const PlanInput& in, const json& deployment, const json& workload,
                   std::optional<std::int64_t> min_count, Plan& plan) {
  const std::string deployment_uid = UidOf(deployment);
  std::vector<const json*> replicasets;
  std::map<std::string, const json*> rs_by_uid;
  for (const json* rs : SortedByName(in.replicasets)) {
    if (ControllerUid(*rs) != deployment_uid) continue;
    replicasets.push_back(rs);
    rs_by_uid[UidOf(*rs)] = rs;
  }
  std::map<std::string, const json*> pg_by_name;
  for (const json* pg : SortedByName(in.podgroups)) pg_by_name.emplace(NameOf(*pg), pg);

  // Foreign objects first: a PodGroup with an active ReplicaSet's name that
  // is not ours stops every PodGroup write and gate lift of the Deployment.
  bool foreign = false;
  for (const json* rs : replicasets) {
    if (!Active(*rs)) continue;
    const auto it = pg_by_name.find(NameOf(*rs));
    if (it == pg_by_name.end() || IsOurPodGroup(*it->second, workload, rs_by_uid)) continue;
    foreign = true;
    AddEvent(plan, "Warning", kReasonForeignObject,
             "PodGroup " + it->first + " exists but does not belong to this Deployment" +
                 (ControllerUid(*it->second).empty()
                      ? std::string(" (it has no controller)")
                      : " (controller: " + ControllerKind(*it->second) + " " +
                            ControllerName(*it->second) + ")") +
                 "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates for "
                 "this Deployment until it is removed");
  }
  if (foreign) {
    plan.note = "foreign PodGroup";
    return;
  }

  std::set<std::string> active_names;
  for (const json* rs : replicasets) {
    if (Active(*rs)) active_names.insert(NameOf(*rs));
  }

  // Deletions: our PodGroups whose ReplicaSet is at zero, Terminating or gone.
  std::set<std::string> deleting;
  for (const auto& [name, pg] : pg_by_name) {
    if (!IsOurPodGroup(*pg, workload, rs_by_uid) || IsTerminating(*pg)) continue;
    const auto rs = rs_by_uid.find(ControllerUid(*pg));
    if (rs != rs_by_uid.end() && Active(*rs->second)) continue;
    if (InUse(in, name)) continue;
    if (rs == rs_by_uid.end() && active_names.count(name) > 0) continue;  // adopted below  // deleted once its last pod is gone (pod events wake us)
    Action del;
    del.kind = ActionKind::kDeletePodGroup;
    del.name = name;
    del.uid = UidOf(*pg);
    plan.actions.push_back(std::move(del));
    deleting.insert(name);
    AddEvent(plan, "Normal", kReasonPodGroupDeleted,
             "Deleted PodGroup " + name +
                 (rs == rs_by_uid.end() ? std::string(": its ReplicaSet no longer exists")
                                        : ": ReplicaSet " + NameOf(*rs->second) + " has no replicas"));
  }

  // Active ReplicaSets: create, keep in step, lift gates.
  bool waiting = false;
  for (const json* rs : replicasets) {
    if (!Active(*rs)) continue;
    const std::string rs_name = NameOf(*rs);
    const auto it = pg_by_name.find(rs_name);
    if (it == pg_by_name.end()) {
      workloadbuilder::BuildResult built = workloadbuilder::BuildPodGroup(workload, *rs);
      if (!built.ok()) {
        plan.note = "cannot build PodGroup " + rs_name + ": " + built.error;
        continue;
      }
      Action create;
      create.kind = ActionKind::kCreatePodGroup;
      create.name = rs_name;
      create.min_count = min_count.value_or(0);
      create.object = std::move(built.object);
      plan.actions.push_back(std::move(create));
      std::string message = "Created PodGroup " + rs_name;
      message.append(" for ReplicaSet ").append(rs_name);
      if (min_count) {
        message.append(" (gang, minCount ").append(std::to_string(*min_count)).append(")");
      } else {
        message.append(" (basic)");
      }
      AddEvent(plan, "Normal", kReasonPodGroupCreated, std::move(message));
      AddLiftGates(in, *rs, plan);
      continue;
    }
    const json& pg = *it->second;
    const bool orphan = rs_by_uid.count(ControllerUid(pg)) == 0;
    if (!IsTerminating(pg) && deleting.count(rs_name) == 0 && ControllerUid(pg) != UidOf(*rs) && orphan) {
      Action adopt;
      adopt.kind = ActionKind::kPatchPodGroupOwners;
      adopt.name = rs_name;
      adopt.uid = UidOf(pg);
      adopt.patch = PodGroupAdoptPatch(pg, *rs);
      plan.actions.push_back(std::move(adopt));
    } else if (IsTerminating(pg) || deleting.count(rs_name) > 0 || ControllerUid(pg) != UidOf(*rs)) {
      // Ours but left over from an earlier life of this name: wait until the
      // podgroup-protection finalizer lets it go, then create it afresh.
      waiting = true;
      std::string message = "PodGroup " + rs_name;
      message
          .append(" is still terminating (its podgroup-protection finalizer waits for every "
                  "pod that names it); it is re-created as soon as it is gone, and the new pods "
                  "of ReplicaSet ")
          .append(rs_name)
          .append(" stay gated until then. Those new pods name it too: if it stays, scale the "
                  "Deployment to 0, wait until the PodGroup is gone, and scale up again");
      AddEvent(plan, "Warning", kReasonPodGroupTerminating, std::move(message));
      continue;
    }
    const json* spec = workloadbuilder::Member(pg, "spec");
    if (min_count && (spec == nullptr || GangMinCount(*spec) != min_count)) {
      Action patch;
      patch.kind = ActionKind::kPatchPodGroupMinCount;
      patch.name = rs_name;
      patch.uid = UidOf(pg);
      patch.min_count = *min_count;
      patch.patch = PodGroupMinCountPatch(patch.uid, *min_count);
      plan.actions.push_back(std::move(patch));
    }
    const OwnerRefAt wref = FindOwnerRef(pg, "Workload");
    const std::string* wref_uid = wref.ref != nullptr ? AsString(Member(*wref.ref, "uid")) : nullptr;
    if (wref_uid == nullptr || *wref_uid != UidOf(workload)) {
      Action owners;
      owners.kind = ActionKind::kPatchPodGroupOwners;
      owners.name = rs_name;
      owners.uid = UidOf(pg);
      owners.patch = PodGroupOwnerPatch(pg, workload);
      plan.actions.push_back(std::move(owners));
    }
    AddLiftGates(in, *rs, plan);
  }
  if (waiting) AddRequeue(plan, kTerminatingRecheck);
}

}  // namespace wasd::reconciler::internal
