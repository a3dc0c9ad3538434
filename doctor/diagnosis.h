// The gang doctor (issue 17; research gang-schedulers.md §C, §D.2): one
// deterministic answer to "why is my gang Pending?" for an opted-in
// Deployment, whatever its backend (native, volcano, kai, coscheduling).
//
//   doctor::GangInput in;            // what the caller read from the cluster
//   in.deployment = ...; in.replicasets = ...; in.pods = ...; ...
//   doctor::Diagnosis d = doctor::Diagnose(in);
//   d.scheduled, d.reason ("WaitingForQuorum"), d.message
//   ("3/4 created, 1 gated by wasd, 2 bound, minCount 4"), d.next_step,
//   d.counts, d.fit ("largest topology.kubernetes.io/zone (zone-a) has room
//   for 6 of 8 members; short 3 nvidia.com/gpu"), d.timeline.
//
// The reason is the first that holds, in this dominance order (§D.2):
//   InvalidSchedulingConfiguration  the intent is unusable, or the backend
//                                   label names no backend
//   APINotAvailable                 the backend's API is not served
//   UnsupportedProviderCapability   the intent asks what the backend cannot
//                                   express under the cluster facts: the
//                                   admission check itself
//                                   (workloadbuilder::CheckBackendCapabilities;
//                                   topology on coscheduling, or on Volcano/KAI
//                                   without a tier/level for its key,
//                                   resourceClaims off native, ...) for a
//                                   Deployment stored past the webhook or
//                                   admitted before the facts changed
//   NotAdmitted                     the Deployment has the annotation but
//                                   not wasd's marker label wasd.io/managed:
//                                   the webhook never admitted it (created
//                                   while it was absent or not called, or in
//                                   an excluded namespace), so no reconciler
//                                   manages it
//   PodGroupMissing                 the current ReplicaSet's group object (or
//                                   the native Workload) does not exist
//   ForeignObject                   it (or the native Workload) exists but
//                                   another owner controls it
//   PodGroupTerminating             it is being deleted, ours or someone
//                                   else's (deleting a foreign one is
//                                   ForeignObject's next step; the next step
//                                   then says what the deletion waits for, and
//                                   that wasd releases a native one that only
//                                   its gated members hold)
//   WaitingForQuorum                fewer than minCount members are
//                                   schedulable (not created yet, or still
//                                   gated by wasd)
//   GatedByOther                    members held by another gate (Kueue's
//                                   kueue.x-k8s.io/admission, ...)
//   Unschedulable                   the scheduler tried and could not place
//                                   the quorum (group condition, pod
//                                   FailedScheduling, PodScheduled False), or
//                                   the fit preview says it cannot fit
//   QueueBlocked                    the backend's queue holds the group
//                                   (Volcano phase Pending, KAI queue reasons);
//                                   disjoint from Unschedulable (a queue
//                                   reason is never a placement reason)
//   ScaleUpPending                  the gang was placed once (quorum bound,
//                                   or the backend says so) but newer members
//                                   are not, whatever the scheduler says of
//                                   them (disjoint from Unschedulable, which
//                                   is about a gang never placed)
//   Scheduled                       every created member is bound (status True)
// A gang with members unbound and no signal at all is WaitingForQuorum ("the
// scheduler has not placed them yet"); so is a gang the backend says it placed
// while fewer than minCount members are bound and the rest fit ("is binding
// its members": the bindings of a large gang follow its placement).
//
// The fit preview: the members still to place × the requests of the current
// ReplicaSet's pod template, against the free capacity (allocatable − the
// requests of bound, non-terminal pods) of the nodes the template may use
// (nodeSelector, NoSchedule/NoExecute taints against tolerations,
// spec.unschedulable), per domain of the intent's topology key (nodes
// without the label are left out), or the whole cluster without one.
// Node affinity, pod (anti-)affinity, spread constraints and resource
// claims are not modelled (the preview says "room for", never "will fit").
//
// Pure; no I/O. Thread-safe.
#ifndef WASD_DOCTOR_DIAGNOSIS_H_
#define WASD_DOCTOR_DIAGNOSIS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloadbuilder/backend_compile.h"

namespace wasd::doctor {

// The stable reasons, most dominant first.
inline constexpr std::string_view kInvalidSchedulingConfiguration =
    "InvalidSchedulingConfiguration";
inline constexpr std::string_view kAPINotAvailable = "APINotAvailable";
inline constexpr std::string_view kUnsupportedProviderCapability = "UnsupportedProviderCapability";
inline constexpr std::string_view kNotAdmitted = "NotAdmitted";
inline constexpr std::string_view kPodGroupMissing = "PodGroupMissing";
inline constexpr std::string_view kForeignObject = "ForeignObject";
inline constexpr std::string_view kPodGroupTerminating = "PodGroupTerminating";
inline constexpr std::string_view kWaitingForQuorum = "WaitingForQuorum";
inline constexpr std::string_view kGatedByOther = "GatedByOther";
inline constexpr std::string_view kUnschedulable = "Unschedulable";
inline constexpr std::string_view kQueueBlocked = "QueueBlocked";
inline constexpr std::string_view kScaleUpPending = "ScaleUpPending";
inline constexpr std::string_view kScheduled = "Scheduled";

// Every reason in dominance order (for tests and documentation).
inline constexpr std::string_view kAllReasons[] = {kInvalidSchedulingConfiguration,
                                                   kAPINotAvailable,
                                                   kUnsupportedProviderCapability,
                                                   kNotAdmitted,
                                                   kPodGroupMissing,
                                                   kForeignObject,
                                                   kPodGroupTerminating,
                                                   kWaitingForQuorum,
                                                   kGatedByOther,
                                                   kUnschedulable,
                                                   kQueueBlocked,
                                                   kScaleUpPending,
                                                   kScheduled};

// What the caller read. Objects are as the API server sends them; malformed
// members read as absent.
struct GangInput {
  nlohmann::json deployment;
  std::vector<nlohmann::json> replicasets;  // the Deployment's (controller uid)
  std::vector<nlohmann::json> pods;         // the ReplicaSets' pods
  // Group objects of the Deployment's backend in its namespace (any of the
  // ReplicaSets'; the one named PodGroupName(rs) of the current one is used).
  std::vector<nlohmann::json> group_objects;
  nlohmann::json workload;                 // native: the Deployment's Workload, or null
  std::vector<nlohmann::json> events;      // the pods' FailedScheduling Events (core/v1)
  std::vector<nlohmann::json> nodes;       // every Node (empty: no fit preview)
  std::vector<nlohmann::json> bound_pods;  // pods with spec.nodeName, any namespace
  bool api_served = true;                  // the backend's group/version/resource is served
  // Native: the scheduling.k8s.io version in use ("scheduling.k8s.io/v1"),
  // found by discovery; empty: the backend table's.
  std::string scheduling_api_version;
  // What the objects do not say (the --volcano-topology-tiers, --kai-topology
  // ... flags of the reconciler, or of `wasd explain`): without them a
  // topology key on Volcano or KAI reads as not expressible.
  workloadbuilder::ClusterFacts facts;
};

// The same inputs, borrowed: pointers to objects the caller keeps alive and
// unchanged for the call (the reconciler passes its cached objects, so a
// diagnosis copies none). Null `deployment` reads as an empty object; null
// `workload` as none; null `facts` as no facts.
using ObjectRefs = std::vector<const nlohmann::json*>;
struct GangView {
  const nlohmann::json* deployment = nullptr;
  ObjectRefs replicasets;
  ObjectRefs pods;
  ObjectRefs group_objects;
  const nlohmann::json* workload = nullptr;
  ObjectRefs events;
  ObjectRefs nodes;
  ObjectRefs bound_pods;
  bool api_served = true;
  std::string_view scheduling_api_version;  // as GangInput's
  const workloadbuilder::ClusterFacts* facts = nullptr;
};

// A view of `input` (which must outlive it).
GangView ViewOf(const GangInput& input);

struct Counts {
  std::int64_t replicas = 0;     // the Deployment's spec.replicas
  std::int64_t min_count = 0;    // the gang minimum (group object, else intent; basic: 1)
  std::int64_t created = 0;      // non-terminating pods of the current ReplicaSet
  std::int64_t gated_wasd = 0;   // … still carrying wasd.io/pod-group
  std::int64_t gated_other = 0;  // … carrying any other scheduling gate
  std::int64_t bound = 0;        // … with spec.nodeName
  std::int64_t running = 0;      // … in phase Running
  std::int64_t failed = 0;       // … in phase Failed
  // … bound while their group object did not exist (Q23: the scheduler did
  // not hold them; internal::CountBoundBeforeGroup says how it is judged).
  std::int64_t bound_before_group = 0;
};

struct DomainFit {
  std::string domain;      // the topology value ("" for the whole cluster)
  std::int64_t nodes = 0;  // usable nodes in it
  std::int64_t room = 0;   // members that fit (per node, summed)
};

struct FitPreview {
  bool computed = false;     // false: no members to place, or no Nodes given
  std::string topology_key;  // "" = the whole cluster
  std::int64_t needed = 0;   // members to place
  // Requests of one member (milli-units), by resource name.
  std::vector<std::pair<std::string, std::int64_t>> requests;
  std::vector<DomainFit> domains;  // largest room first, then by name
  // For the largest domain: what it lacks for `needed` members, summed over
  // its nodes (milli-units), by resource; empty when the total is there.
  std::vector<std::pair<std::string, std::int64_t>> short_by;
  bool fits = false;        // the largest domain has room for `needed`
  std::string only_domain;  // PreviewFit's only_domain
  // "largest topology.kubernetes.io/zone (zone-a) has room for 6 of 8 members; short 3
  // nvidia.com/gpu"; with only_domain "topology.kubernetes.io/zone zone-a (where the gang
  // runs) has room for ..."
  std::string text;
};

struct TimelineEntry {
  std::string time;  // RFC 3339 as the object says
  std::string pod;
  std::string what;  // "created", "gated (wasd.io/pod-group)", "unschedulable", "bound to node-1",
                     // "running", "failed"
};

struct Diagnosis {
  bool scheduled = false;  // status True
  std::string reason;
  std::string message;
  std::string next_step;
  std::string backend;         // "native", …
  std::string replicaset;      // the current ReplicaSet, "" when none
  std::string group_name;      // its group object's name
  std::string group_kind;      // "PodGroup (scheduling.k8s.io/v1)"
  std::string group_summary;   // the group object's status in one line
  std::string scheduler_said;  // the newest FailedScheduling / backend message
  Counts counts;
  FitPreview fit;
  std::vector<TimelineEntry> timeline;  // oldest first
};

Diagnosis Diagnose(const GangInput& input);
// The same diagnosis over borrowed objects (what the reconciler runs).
Diagnosis Diagnose(const GangView& input);

// False only when Diagnose(input) cannot be Scheduled: a member of the
// current ReplicaSet (a pod not being deleted) has no node yet. Costs one
// pass over the pods and no diagnosis; GangStatus uses it to skip the looks
// that could not change a settling gang's fate.
bool MayBeScheduled(const GangView& input);

// The fit preview alone (Diagnose calls it): `needed` members of `pod_spec`.
// `only_domain` (with a topology key): the one domain the members may use —
// Diagnose passes the domain where a placed gang runs, for its new members.
FitPreview PreviewFit(const nlohmann::json& pod_spec, std::int64_t needed,
                      std::string_view topology_key, const std::vector<nlohmann::json>& nodes,
                      const std::vector<nlohmann::json>& bound_pods,
                      std::string_view only_domain = {});
FitPreview PreviewFit(const nlohmann::json& pod_spec, std::int64_t needed,
                      std::string_view topology_key, const ObjectRefs& nodes,
                      const ObjectRefs& bound_pods, std::string_view only_domain = {});

// Requests of one pod: the sum over containers, at least the largest init
// container's, plus the pod overhead; every member counts one "pods".
std::vector<std::pair<std::string, std::int64_t>> PodRequests(const nlohmann::json& pod_spec);

// {"status": "True"|"False", "reason", "message", "nextStep", "backend",
//  "replicaSet", "group": {"name", "kind", "summary"}, "counts": {...},
//  "fit": {...}, "timeline": [...]} — the stable shape of `wasd explain -o json`.
nlohmann::json ToJson(const Diagnosis& diagnosis);

}  // namespace wasd::doctor

#endif  // WASD_DOCTOR_DIAGNOSIS_H_
