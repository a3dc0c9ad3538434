// Action's named constructors, names and log lines (see action.h).
#include "planner/action.h"

#include <utility>

#include "objects/object_util.h"
#include "planner/plan.h"

namespace wasd::planner {

Action Action::CreateWorkload(std::string name, nlohmann::json object, std::int64_t min_count) {
  Action a;
  a.kind = ActionKind::kCreateWorkload;
  a.name = std::move(name);
  a.object = std::move(object);
  a.min_count = min_count;
  return a;
}

Action Action::PatchWorkloadMinCount(std::string name, std::string uid, std::size_t template_index,
                                     std::int64_t min_count) {
  Action a;
  a.kind = ActionKind::kPatchWorkloadMinCount;
  a.patch = WorkloadMinCountPatch(uid, template_index, min_count);
  a.name = std::move(name);
  a.uid = std::move(uid);
  a.min_count = min_count;
  return a;
}

Action Action::CreatePodGroup(std::string name, nlohmann::json object, std::int64_t min_count) {
  Action a = CreateWorkload(std::move(name), std::move(object), min_count);
  a.kind = ActionKind::kCreatePodGroup;
  return a;
}

Action Action::PatchPodGroupMinCount(std::string name, std::string uid, std::int64_t min_count,
                                     std::string_view pointer) {
  Action a;
  a.kind = ActionKind::kPatchPodGroupMinCount;
  a.patch = PodGroupMinCountPatch(uid, min_count, pointer);
  a.name = std::move(name);
  a.uid = std::move(uid);
  a.min_count = min_count;
  return a;
}

Action Action::PatchPodGroupOwners(std::string name, std::string uid, nlohmann::json patch) {
  Action a;
  a.kind = ActionKind::kPatchPodGroupOwners;
  a.name = std::move(name);
  a.uid = std::move(uid);
  a.patch = std::move(patch);
  return a;
}

Action Action::DeletePodGroup(const nlohmann::json& podgroup, bool owner_may_be_active) {
  Action a;
  a.kind = ActionKind::kDeletePodGroup;
  a.name = objects::NameOf(podgroup);
  a.uid = objects::UidOf(podgroup);
  a.resource_version = objects::ResourceVersionOf(podgroup);
  a.owner_name =
      objects::ControllerKind(podgroup) == "ReplicaSet" ? objects::ControllerName(podgroup) : "";
  a.owner_uid = objects::ControllerUid(podgroup);
  a.owner_may_be_active = owner_may_be_active;
  return a;
}

Action Action::ReleasePodGroup(std::string name, std::string uid, std::size_t finalizer_index) {
  Action a;
  a.kind = ActionKind::kReleasePodGroup;
  a.patch = RemoveFinalizerPatch(uid, finalizer_index, objects::kPodGroupProtectionFinalizer);
  a.name = std::move(name);
  a.uid = std::move(uid);
  return a;
}

Action Action::ReleaseForeignPodGroup(std::string name, std::string uid,
                                      std::size_t finalizer_index,
                                      std::vector<std::string> owner_uids) {
  Action a = ReleasePodGroup(std::move(name), std::move(uid), finalizer_index);
  a.foreign = true;
  a.owner_uids = std::move(owner_uids);
  return a;
}

Action Action::LiftGate(std::string pod_name, std::string pod_uid, std::size_t gate_index) {
  Action a;
  a.kind = ActionKind::kLiftGate;
  a.name = std::move(pod_name);
  a.uid = std::move(pod_uid);
  a.gate_index = gate_index;
  a.patch = LiftGatePatch(gate_index);
  return a;
}

Action Action::Event(std::string_view type, std::string_view reason, std::string message) {
  Action a;
  a.kind = ActionKind::kEvent;
  a.event_type = std::string(type);
  a.reason = std::string(reason);
  a.message = std::move(message);
  return a;
}

Action Action::RequeueAfter(std::chrono::milliseconds delay) {
  Action a;
  a.kind = ActionKind::kRequeueAfter;
  a.delay = delay;
  return a;
}

std::string_view ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kCreateWorkload: return "CreateWorkload";
    case ActionKind::kPatchWorkloadMinCount: return "PatchWorkloadMinCount";
    case ActionKind::kCreatePodGroup: return "CreatePodGroup";
    case ActionKind::kPatchPodGroupMinCount: return "PatchPodGroupMinCount";
    case ActionKind::kPatchPodGroupOwners: return "PatchPodGroupOwners";
    case ActionKind::kDeletePodGroup: return "DeletePodGroup";
    case ActionKind::kReleasePodGroup: return "ReleasePodGroup";
    case ActionKind::kLiftGate: return "LiftGate";
    case ActionKind::kEvent: return "Event";
    case ActionKind::kRequeueAfter: return "RequeueAfter";
  }
  return "Unknown";
}

std::string Action::ToString() const {
  std::string out(ActionKindName(kind));
  switch (kind) {
    case ActionKind::kCreateWorkload:
    case ActionKind::kCreatePodGroup: out += " " + objects::NameOf(object); break;
    case ActionKind::kPatchWorkloadMinCount:
    case ActionKind::kPatchPodGroupMinCount:
      out += " " + name + " minCount=" + std::to_string(min_count);
      break;
    case ActionKind::kPatchPodGroupOwners:
    case ActionKind::kReleasePodGroup:
      out += " " + name + " uid=" + uid + (foreign ? " (foreign)" : "");
      break;
    case ActionKind::kDeletePodGroup:
      out += " " + name + " uid=" + uid + " resourceVersion=" + resource_version;
      break;
    case ActionKind::kLiftGate:
      out += " " + name + " gate[" + std::to_string(gate_index) + "]";
      break;
    case ActionKind::kEvent: out += " " + event_type + " " + reason + ": " + message; break;
    case ActionKind::kRequeueAfter: out += " " + std::to_string(delay.count()) + "ms"; break;
  }
  return out;
}

}  // namespace wasd::planner
