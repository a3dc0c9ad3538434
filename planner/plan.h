// The reconciler's decision, as a pure function: the observed state of one
// opted-in Deployment (its Workload candidates, ReplicaSets, the PodGroups
// that matter, its gated pods, the PriorityClass values it needs) goes in; an
// ordered list of actions comes out. No I/O, no clock: every case the
// controller meets is tested without an API server (tests/planner).
//
// What the plan does (docs/design.md "Reconciler" and the decisions table):
//  1. Workload `GenerateWorkloadName(deployment, uid)`, found by its
//     controller ownerReference UID (not by name alone). Missing → create it
//     and stop (PodGroups need its UID; the executor feeds the created object
//     back and plans again). An object with our name that another owner
//     controls (or nobody) → Warning Event ForeignObject, nothing else.
//     gang.minCount: the explicit value, else replicas; at zero replicas a new
//     Workload gets 1 and an existing one is left alone.
//  2. PodGroups, one per ReplicaSet with replicas > 0, named
//     PodGroupName(rs name, rs uid) (Q12), controlled by it and referencing
//     the Workload; minCount follows the Workload template (patched Workload
//     first, then PodGroups). Zero replicas, a ReplicaSet that is gone, or a
//     name no ReplicaSet needs → delete once no unfinished pod names it (see
//     InUse in plan_podgroups.cc); the executor re-reads the ReplicaSet live
//     and deletes with uid + resourceVersion preconditions (Q13). A
//     PodGroup still Terminating when its name is needed again: when only
//     never-run gated pods name it, remove its podgroup-protection finalizer
//     (Event PodGroupReleased) and re-create it (Q14); otherwise wait
//     (Warning Event PodGroupTerminating, requeue). A PodGroup with a needed
//     name that is not ours → ForeignObject, and no PodGroup writes or gate
//     lifting for the whole Deployment. Once such a foreign PodGroup is
//     Terminating (deleted on the Event's advice), wasd's own gated pods keep
//     its podgroup-protection finalizer: when that finalizer alone holds it
//     and only never-run pods of this Deployment still gated by wasd name it
//     (at least one), it is released the same way (ReleaseForeignPodGroup,
//     Event PodGroupReleased; the executor confirms the pods with a live
//     list first) and created as ours once gone; otherwise a Warning
//     PodGroupTerminating says what holds it, and the plan looks again.
//  3. Gate lifting: every gated pod of a ReplicaSet whose PodGroup exists (and
//     is patched to the new minCount earlier in the same plan) gets one JSON
//     patch removing only the gate `wasd.io/pod-group`.
//
// Backends (docs/design.md Q19; workloadbuilder/backend.h): the Deployment's pod
// template label wasd.io/backend names its backend (absent: native). The
// other backends have no Workload: step 1 is skipped, and step 2 builds one
// group object of the backend's API (BuildBackendPodGroup, with
// PlanInput::facts) per active ReplicaSet, controlled by it; minMember
// follows the built object (patched at Info(backend).min_count_pointer with a
// uid `test`; on KAI a derived one grows only with the active members,
// docs/backends.md); deletions, the foreign-object stop and gate lifting are
// as above. A member of the ReplicaSet whose link names another group
// (another actor rewrote it: KAI's podgrouper before v0.15.0) is still the
// ReplicaSet's (gate lifted, counted), with a Warning MemberRelinked. A group
// object whose ReplicaSet was deleted with propagationPolicy Orphan is known
// by its label and Deployment UID annotation and deleted once no pod names it. Their objects carry
// no podgroup-protection finalizer, so a Terminating one is only waited for (never released, Q14 is
// native-only). Plan::backend tells the executor which resource the PodGroup actions use.
//
// Thread-safe: pure functions over const inputs.
#ifndef WASD_PLANNER_PLAN_H_
#define WASD_PLANNER_PLAN_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "objects/object_util.h"
#include "planner/action.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/builder.h"

namespace wasd::planner {

// The planner reads cached, shared objects (objects/object_util.h).
using objects::Object;

// Event reasons (docs/design.md "Events"; a contract for users and tests).
inline constexpr std::string_view kReasonWorkloadCreated = "WorkloadCreated";
inline constexpr std::string_view kReasonPodGroupCreated = "PodGroupCreated";
inline constexpr std::string_view kReasonPodGroupDeleted = "PodGroupDeleted";
inline constexpr std::string_view kReasonPodGroupTerminating = "PodGroupTerminating";
inline constexpr std::string_view kReasonForeignObject = "ForeignObject";
inline constexpr std::string_view kReasonClaimsStripped = "ClaimsStripped";
inline constexpr std::string_view kReasonPriorityClassSkipped = "PriorityClassSkipped";
inline constexpr std::string_view kReasonApiNotServed = "APINotServed";
inline constexpr std::string_view kReasonPodGroupReleased = "PodGroupReleased";
inline constexpr std::string_view kReasonInvalidConfiguration = "InvalidSchedulingConfiguration";
inline constexpr std::string_view kReasonGatesLifted = "SchedulingGatesLifted";
inline constexpr std::string_view kReasonFailedWorkloadCreate = "FailedWorkloadCreate";
inline constexpr std::string_view kReasonFailedPodGroupCreate = "FailedPodGroupCreate";
inline constexpr std::string_view kReasonMemberRelinked = "MemberRelinked";
inline constexpr std::string_view kReasonMemberUnlinked = "MemberUnlinked";

// Highest priority a Workload/PodGroup template accepts (docs/api.md §a.1);
// system classes (2,000,000,000 and up) are above it.
inline constexpr std::int64_t kMaxTemplatePriority = 1'000'000'000;

// How long to wait before looking again at a PodGroup that is still
// Terminating (its podgroup-protection finalizer waits for pods to finish;
// the watch event of its removal normally wakes us first).
inline constexpr std::chrono::milliseconds kTerminatingRecheck{5'000};
// A ReplicaSet scaled up while the cached Deployment still says 0 replicas:
// the Deployment's own update is a moment behind in the cache (or the
// ReplicaSet is on its way down). Look again this soon instead of creating a
// PodGroup with the minCount of a Deployment at zero.
inline constexpr std::chrono::milliseconds kStaleDeploymentRecheck{1'000};

struct PlanInput {
  Object deployment;                // the apps/v1 Deployment; null when gone
  std::vector<Object> workloads;    // Workloads with our name or controlled by the Deployment
  std::vector<Object> replicasets;  // ReplicaSets (filtered here by controller UID)
  std::vector<Object> podgroups;    // PodGroups named like a ReplicaSet or referencing our Workload
  // Pods of those ReplicaSets and pods naming those PodGroups
  // (spec.schedulingGroup.podGroupName); the plan lifts gates of the live
  // gated ones and keeps a PodGroup that some unfinished pod still names.
  std::vector<Object> pods;
  // Known PriorityClass values by name (only the pod template's class matters).
  std::map<std::string, std::int64_t, std::less<>> priority_classes;
  // What the non-native compilers need to know about the cluster (flags).
  workloadbuilder::ClusterFacts facts;
  // The scheduling.k8s.io version in use (found by discovery): the
  // apiVersion of the Workloads and PodGroups the plan builds and of the
  // Workload ownerReferences it writes. Objects read through either version
  // are the same objects: no decision reads their apiVersion.
  std::string scheduling_api_version = std::string(workloadbuilder::kSchedulingApiVersionV1beta1);
};

struct Plan {
  std::vector<Action> actions;
  // Why nothing (more) could be planned, for the log: "" when the plan is
  // complete. Set for an unusable configuration, a build error, a foreign
  // object, or a Workload that is being created in this plan.
  std::string note;
  // True when the plan stops after creating the Workload: the executor plans
  // again once it knows the created Workload's UID.
  bool needs_replan = false;
  // The Deployment's backend: the API of every PodGroup action of the plan.
  workloadbuilder::Backend backend = workloadbuilder::Backend::kNative;

  bool empty() const { return actions.empty(); }
};

// The decision. Never throws; malformed objects are ignored or reported in
// `note`.
Plan PlanDeployment(const PlanInput& input);

// JSON patches the plan uses (exposed for tests). Each starts with a `test`
// of metadata.uid where a UID is given, so a patch can never land on a
// re-created object of the same name.
nlohmann::json WorkloadMinCountPatch(std::string_view uid, std::size_t template_index,
                                     std::int64_t min_count);
// `pointer`: where the backend keeps the gang minimum (Info().min_count_pointer).
nlohmann::json PodGroupMinCountPatch(
    std::string_view uid, std::int64_t min_count,
    std::string_view pointer = "/spec/schedulingPolicy/gang/minCount");
// Points the PodGroup's Workload ownerReference at `workload` (name, uid),
// with apiVersion `api_version` (the version in use): replaces the existing
// reference of kind Workload, or appends one.
nlohmann::json PodGroupOwnerPatch(
    const nlohmann::json& podgroup, const nlohmann::json& workload,
    std::string_view api_version = workloadbuilder::kSchedulingApiVersionV1beta1);
// Makes `replicaset` the PodGroup's controller (replacing the reference to a
// ReplicaSet that no longer exists), the way a ReplicaSet adopts orphans.
nlohmann::json PodGroupAdoptPatch(const nlohmann::json& podgroup, const nlohmann::json& replicaset);
// [test uid, test /metadata/finalizers/<index> == finalizer, remove it].
nlohmann::json RemoveFinalizerPatch(std::string_view uid, std::size_t index,
                                    std::string_view finalizer);
// [test /spec/schedulingGates/<index>/name == gate, remove /spec/schedulingGates/<index>].
nlohmann::json LiftGatePatch(std::size_t gate_index);

// The Deployment's backend, from its pod template's labels; nullopt when the
// label names no backend.
std::optional<workloadbuilder::Backend> BackendOf(const nlohmann::json& deployment);

// Q11: the resourceClaims sent in a PodGroup create that the API server's
// answer lacks (names, in sent order); empty when nothing was stripped.
std::vector<std::string> StrippedClaims(const nlohmann::json& sent, const nlohmann::json& stored);

}  // namespace wasd::planner

#endif  // WASD_PLANNER_PLAN_H_
