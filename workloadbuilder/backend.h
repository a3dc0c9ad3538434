// Gang-scheduling backends (docs/design.md Q19; issue 16): one Deployment intent
// (the KEP-shaped scheduling configuration) compiled to the group object of
// the scheduler the cluster runs.
//
//   native        scheduling.k8s.io/v1beta1 PodGroup (+ one Workload per
//                 Deployment); pod link spec.schedulingGroup.podGroupName;
//                 schedulerName kept
//   volcano       scheduling.volcano.sh/v1beta1 PodGroup; annotation
//                 scheduling.k8s.io/group-name; schedulerName volcano
//   kai           scheduling.run.ai/v2alpha2 PodGroup; annotation
//                 pod-group-name (+ kai.scheduler/skip-podgrouper "true");
//                 schedulerName kai-scheduler
//   coscheduling  scheduling.x-k8s.io/v1alpha1 PodGroup; label
//                 scheduling.x-k8s.io/pod-group; schedulerName
//                 scheduler-plugins-scheduler
//
// Every backend's group object is named PodGroupName(rs name, rs uid) (Q12),
// lives in the ReplicaSet's namespace and is controller-owned by it.
//
// Which backend a Deployment uses: its annotation kBackendAnnotation when set
// (checked at admission against --allowed-backends), else the cluster's
// --backend. The Deployment mutating path stamps the resolved name into the
// pod template's labels (kBackendLabel) at CREATE, so pods, ReplicaSets and
// the reconciler read it from the object and never from a flag that could
// differ between components or change later. An object without the label was
// made before backends existed: it is native.
//
// Pure functions over constants; thread-safe.
#ifndef WASD_WORKLOADBUILDER_BACKEND_H_
#define WASD_WORKLOADBUILDER_BACKEND_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::workloadbuilder {

enum class Backend { kNative, kVolcano, kKai, kCoscheduling };

inline constexpr std::array<Backend, 4> kAllBackends = {Backend::kNative, Backend::kVolcano,
                                                        Backend::kKai, Backend::kCoscheduling};

// The Deployment's optional choice of backend (a backend name).
inline constexpr std::string_view kBackendAnnotation = "wasd.io/backend";
// The resolved backend on the pod template, ReplicaSets and pods.
inline constexpr std::string_view kBackendLabel = "wasd.io/backend";

// What the rest of wasd needs to know about a backend's API.
struct BackendInfo {
  Backend backend;
  std::string_view name;         // "native", "volcano", "kai", "coscheduling"
  std::string_view api_group;    // e.g. "scheduling.volcano.sh"
  std::string_view api_version;  // e.g. "v1beta1" (the version part only)
  std::string_view resource;     // "podgroups" for every backend
  std::string_view kind;         // "PodGroup" for every backend
  std::string_view
      scheduler_name;  // set on pods that carry "default-scheduler"; "" = keep (native)
  bool has_workload;   // true only for native (a Workload per Deployment)
  // JSON pointer of the gang minimum in the group object's spec, for the
  // minCount patch: "/spec/schedulingPolicy/gang/minCount" (native) or
  // "/spec/minMember" (the others).
  std::string_view min_count_pointer;
};

const BackendInfo& Info(Backend backend);

// "native" → kNative, …; nullopt for anything else (case-sensitive).
std::optional<Backend> ParseBackend(std::string_view name);
std::string_view BackendName(Backend backend);
// "scheduling.volcano.sh/v1beta1", …
std::string GroupVersion(Backend backend);

// The backend of a pod, ReplicaSet or pod template from its labels object
// (may be null or not an object): kBackendLabel's value; absent → native;
// a value that is not a backend name → nullopt.
std::optional<Backend> BackendOfLabels(const nlohmann::json& labels);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_BACKEND_H_
