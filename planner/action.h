// Action: one step of a Plan (plan.h) — a write the executor makes (create,
// JSON patch, delete), an Event it records, or a requeue. Actions are built
// only through the named constructors below, which fill exactly the members
// their kind uses (and the JSON patch, where there is one), so a plan reads
// as a list of intents.
//
// Plain values; thread-safe as any const value.
#ifndef WASD_PLANNER_ACTION_H_
#define WASD_PLANNER_ACTION_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace wasd::planner {

enum class ActionKind {
  kCreateWorkload,         // object
  kPatchWorkloadMinCount,  // name, uid, min_count, patch (JSON patch)
  kCreatePodGroup,         // name, object
  kPatchPodGroupMinCount,  // name, uid, min_count, patch (JSON patch)
  kPatchPodGroupOwners,    // name, uid, patch (JSON patch): Workload reference or adoption
  // name, uid + resource_version (preconditions); owner_name/owner_uid: the
  // controlling ReplicaSet the executor re-reads first (Q13), unless
  // owner_may_be_active (a superseded name)
  kDeletePodGroup,
  // name, uid, patch: removes podgroup-protection (Q14); foreign and
  // owner_uids for a PodGroup that is someone else's (the executor first
  // confirms with a live pod list that only those owners' pods name it)
  kReleasePodGroup,
  kLiftGate,      // name (pod), uid (pod), gate_index, patch (JSON patch)
  kEvent,         // event_type, reason, message
  kRequeueAfter,  // delay
};

std::string_view ActionKindName(ActionKind kind);

struct Action {
  // Create `object` (a Workload named `name`; `min_count`: its gang
  // minCount, 0 for basic).
  static Action CreateWorkload(std::string name, nlohmann::json object, std::int64_t min_count);
  // Set gang.minCount of template `template_index` of Workload name/uid.
  static Action PatchWorkloadMinCount(std::string name, std::string uid, std::size_t template_index,
                                      std::int64_t min_count);
  // Create `object` (a PodGroup named `name`; `min_count` as above).
  static Action CreatePodGroup(std::string name, nlohmann::json object, std::int64_t min_count);
  // Set gang.minCount of PodGroup name/uid (at `pointer`: the backend's
  // Info().min_count_pointer).
  static Action PatchPodGroupMinCount(
      std::string name, std::string uid, std::int64_t min_count,
      std::string_view pointer = "/spec/schedulingPolicy/gang/minCount");
  // Apply `patch` (PodGroupOwnerPatch or PodGroupAdoptPatch) to PodGroup name/uid.
  static Action PatchPodGroupOwners(std::string name, std::string uid, nlohmann::json patch);
  // Delete `podgroup` (as observed) with its uid and resourceVersion as
  // preconditions. Its controlling ReplicaSet, when there is one, is re-read
  // first unless `owner_may_be_active` (the name is superseded, Q13).
  static Action DeletePodGroup(const nlohmann::json& podgroup, bool owner_may_be_active);
  // Remove the podgroup-protection finalizer at `finalizer_index` of
  // PodGroup name/uid (Q14).
  static Action ReleasePodGroup(std::string name, std::string uid, std::size_t finalizer_index);
  // The same for a PodGroup wasd does not own: only when every unfinished pod
  // naming it is a never-run pod, gated by wasd, of a ReplicaSet in
  // `owner_uids` — which the executor confirms live before the write (the
  // caches hold only wasd's pods).
  static Action ReleaseForeignPodGroup(std::string name, std::string uid,
                                       std::size_t finalizer_index,
                                       std::vector<std::string> owner_uids);
  // Remove wasd's scheduling gate at `gate_index` of pod name/uid.
  static Action LiftGate(std::string pod_name, std::string pod_uid, std::size_t gate_index);
  // Record an Event ("Normal" or "Warning") on the Deployment.
  static Action Event(std::string_view type, std::string_view reason, std::string message);
  // Look at the Deployment again after `delay`.
  static Action RequeueAfter(std::chrono::milliseconds delay);

  ActionKind kind = ActionKind::kEvent;
  std::string name;
  std::string uid;
  nlohmann::json object;  // created object (create actions)
  nlohmann::json patch;   // RFC 6902 patch (patch actions)
  std::int64_t min_count = 0;
  std::size_t gate_index = 0;
  std::string resource_version;  // delete precondition
  std::string owner_name;        // delete: the ReplicaSet to re-read
  std::string owner_uid;
  bool owner_may_be_active = false;
  bool foreign = false;                 // release: the PodGroup is not ours
  std::vector<std::string> owner_uids;  // release (foreign): ReplicaSets whose pods may name it
  std::string event_type;               // "Normal" or "Warning"
  std::string reason;
  std::string message;
  std::chrono::milliseconds delay{0};

  // One line for logs and test failure messages.
  std::string ToString() const;
};

}  // namespace wasd::planner

#endif  // WASD_PLANNER_ACTION_H_
