// The compilers from one Deployment intent to the group object of each
// non-native gang scheduler (docs/design.md Q19; docs/howto/choose-a-backend.md),
// the pod link each backend reads, and the cluster facts a compile
// needs that are not in the objects (set from flags, cmd/flags.cc).
//
//   volcano       scheduling.volcano.sh/v1beta1 PodGroup   spec.minMember, queue,
//                                                          priorityClassName, minResources,
//                                                          networkTopology
//   kai           scheduling.run.ai/v2alpha2 PodGroup      spec.minMember, queue,
//                                                          priorityClassName, topologyConstraint
//   coscheduling  scheduling.x-k8s.io/v1alpha1 PodGroup    spec.minMember, minResources,
//                                                          scheduleTimeoutSeconds
//
// The native backend keeps BuildWorkload + BuildPodGroup (builder.h).
//
// The intent is the KEP-shaped scheduling configuration (schedulingPolicy,
// schedulingConstraints, disruptionMode, resourceClaims) plus, in the
// annotation only, a `backends` block with the knobs one backend alone has:
//
//   backends:
//     volcano:      {queue: Q, minResources: {cpu: "4", ...}}
//     kai:          {queue: Q}
//     coscheduling: {scheduleTimeoutSeconds: N, minResources: {...}}
//
// The compilers do not validate: run ValidateSchedulingConfig and
// CheckBackendCapabilities (backend_capabilities.h) first. They never throw.
//
// Pure functions; thread-safe.
#ifndef WASD_WORKLOADBUILDER_BACKEND_COMPILE_H_
#define WASD_WORKLOADBUILDER_BACKEND_COMPILE_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloadbuilder/backend.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::workloadbuilder {

// The pod links (research §A.6).
inline constexpr std::string_view kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";
inline constexpr std::string_view kKaiGroupAnnotation = "pod-group-name";
inline constexpr std::string_view kKaiSkipPodgrouperAnnotation = "kai.scheduler/skip-podgrouper";
inline constexpr std::string_view kCoschedulingGroupLabel = "scheduling.x-k8s.io/pod-group";
// On every group object wasd builds for a non-native backend: the label
// (kManagedLabel = "true") scopes the reconciler's informers to wasd's own
// groups, and this annotation names the Deployment (by UID) the group is for,
// so a group whose ReplicaSet was deleted with propagationPolicy Orphan (it
// then has no owner) is still known as that Deployment's and cleaned up.
inline constexpr std::string_view kDeploymentUidAnnotation = "wasd.io/deployment-uid";
// What the API server sets on a pod that names no scheduler.
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
inline constexpr std::string_view kDefaultCoschedulingScheduler = "scheduler-plugins-scheduler";

// A Volcano HyperNode tier a node-label key maps to: by number
// (networkTopology.highestTierAllowed) or by name (highestTierName).
struct VolcanoTier {
  std::optional<int> number;  // set: highestTierAllowed
  std::string name;           // else: highestTierName
};

// What a compile needs to know about the cluster that the objects do not
// say. Set from flags (cmd/flags.cc AddBackendFlags).
struct ClusterFacts {
  // --volcano-topology-tiers KEY=TIER,...: the HyperNode tier built from
  // node label KEY (Volcano's label discoverer). A topology key not listed
  // here cannot be expressed on Volcano and is denied.
  std::vector<std::pair<std::string, VolcanoTier>> volcano_tiers;
  // --kai-topology NAME: the KAI Topology CR (kai.scheduler/v1alpha1) named
  // by topologyConstraint.topology; "" = none (topology denied on KAI).
  std::string kai_topology;
  // --kai-topology-levels KEY,...: the node-label keys that Topology lists
  // in spec.levels[].nodeLabel.
  std::vector<std::string> kai_topology_levels;
  // --volcano-queue: spec.queue when the Deployment names none; "" = leave
  // it unset (Volcano then uses its queue "default").
  std::string volcano_queue;
  // --kai-queue: spec.queue when the Deployment names none (KAI needs one;
  // "default-queue" is what its podgrouper falls back to).
  std::string kai_queue = "default-queue";
  // --coscheduling-scheduler-name: the second scheduler the scheduler-plugins
  // chart installs (renamed by some installs).
  std::string coscheduling_scheduler_name = std::string(kDefaultCoschedulingScheduler);

  // The tier for node-label `key`, or nullptr.
  const VolcanoTier* VolcanoTierFor(std::string_view key) const;
  // True when the KAI Topology is set and lists `key`.
  bool KaiHasLevel(std::string_view key) const;
};

// The backends a component serves, from --backend and --allowed-backends.
struct BackendSettings {
  Backend backend = Backend::kNative;  // --backend: a Deployment without wasd.io/backend
  std::vector<Backend> allowed;        // --allowed-backends; empty = just `backend`
  ClusterFacts facts;

  bool Allows(Backend b) const;
  // The allowed backends' names, in kAllBackends order.
  std::vector<std::string> AllowedNames() const;
};

// The backend a Deployment uses: its annotation wasd.io/backend when that
// names a backend, else its pod template's label wasd.io/backend when that
// names one, else `fallback` (the --backend of the component asking).
// Admission checks the annotation (an unknown name is denied there).
Backend DeploymentBackend(const nlohmann::json& deployment, Backend fallback);

// The scheduler a pod of `backend` must name: Info().scheduler_name, the
// configured one for coscheduling, "" for native (kept as it is).
std::string_view SchedulerNameFor(Backend backend, const ClusterFacts& facts);

// The group object for `replicaset` under a non-native backend:
//   apiVersion/kind from Info(backend); metadata name PodGroupName(rs name,
//   rs uid), the ReplicaSet's namespace, ownerReferences = [the ReplicaSet,
//   controller, blockOwnerDeletion] only, label wasd.io/managed "true",
//   annotation kDeploymentUidAnnotation = the Deployment's metadata.uid;
//   spec.minMember = ResolveMinCount(config, deployment spec.replicas) for a
//   gang, 1 for basic; and the backend's own fields (see the file comment):
//   queue (config backends.<b>.queue, else the facts' default),
//   priorityClassName (the Deployment's pod template), networkTopology
//   {mode: hard, highestTierAllowed|highestTierName} (Volcano) /
//   topologyConstraint {topology, requiredTopologyLevel} (KAI) from
//   schedulingConstraints.topology[0].key, minResources and
//   scheduleTimeoutSeconds from the backends block.
// Errors: backend native (use BuildWorkload/BuildPodGroup); the ReplicaSet
// without name or uid; config not an object; a topology key the facts do
// not map (CheckBackendCapabilities reports that at admission).
BuildResult BuildBackendPodGroup(Backend backend, const nlohmann::json& deployment,
                                 const nlohmann::json& config, const nlohmann::json& replicaset,
                                 const ClusterFacts& facts);

// The group object a release needs (a Deployment without a usable
// scheduling configuration whose pods already name PodGroupName(rs name, rs
// uid)): no gang, so each pod is scheduled on its own. Native: a
// scheduling.k8s.io PodGroup with schedulingPolicy basic and no Workload
// reference; the others: BuildBackendPodGroup with a basic configuration
// (minMember 1). Controlled by the ReplicaSet, as the groups of a gang are.
BuildResult BuildReleaseGroup(Backend backend, const nlohmann::json& deployment,
                              const nlohmann::json& replicaset, const ClusterFacts& facts,
                              std::string_view api_version = "scheduling.k8s.io/v1beta1");

// The group a pod names under its backend (read from the pod's
// kBackendLabel; absent = native): native spec.schedulingGroup.podGroupName,
// volcano annotation scheduling.k8s.io/group-name, kai annotation
// pod-group-name, coscheduling label scheduling.x-k8s.io/pod-group. "" when
// the pod names none or its backend label is not a backend.
std::string LinkedPodGroupName(const nlohmann::json& pod);

// The same for a pod whose backend is already known.
std::string LinkedPodGroupName(const nlohmann::json& pod, Backend backend);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_BACKEND_COMPILE_H_
