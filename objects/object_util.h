// Object helpers for the planner and the reconciler: reading the few
// metadata facts the planner and the caches key on (names, UIDs, controller
// ownerReferences, deletion marks, scheduling gates) from untrusted JSON
// objects.
//
// Every function tolerates malformed objects (a missing or mistyped member
// reads as absent) and never throws.
//
// Pure functions; thread-safe.
#ifndef WASD_OBJECTS_OBJECT_UTIL_H_
#define WASD_OBJECTS_OBJECT_UTIL_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace wasd::objects {

// Cached objects are shared and immutable.
using Object = std::shared_ptr<const nlohmann::json>;

// The finalizer kube's podgroup-protection controller puts on every
// PodGroup; it waits for the pods that name the PodGroup.
inline constexpr std::string_view kPodGroupProtectionFinalizer =
    "scheduling.k8s.io/podgroup-protection";

// metadata.name / namespace / uid / resourceVersion; "" when absent.
std::string NameOf(const nlohmann::json& object);
std::string NamespaceOf(const nlohmann::json& object);
std::string UidOf(const nlohmann::json& object);
std::string ResourceVersionOf(const nlohmann::json& object);

// True when metadata.deletionTimestamp is set (the object is Terminating).
bool IsTerminating(const nlohmann::json& object);

// The ownerReference marked controller: true, or nullptr.
const nlohmann::json* ControllerRef(const nlohmann::json& object);
// The controller's uid / kind / name; "" when there is no controller.
std::string ControllerUid(const nlohmann::json& object);
std::string ControllerKind(const nlohmann::json& object);
std::string ControllerName(const nlohmann::json& object);

// The first ownerReference of `kind`, with its index in the list.
struct OwnerRefAt {
  const nlohmann::json* ref = nullptr;
  std::size_t index = 0;
};
OwnerRefAt FindOwnerRef(const nlohmann::json& object, std::string_view kind);

// spec.replicas, defaulting to 1 when absent (as the API server defaults it).
std::int64_t ReplicasOf(const nlohmann::json& object);

// Index of the scheduling gate `gate` in spec.schedulingGates, if present.
std::optional<std::size_t> GateIndex(const nlohmann::json& pod, std::string_view gate);

// True when the pod was never placed: no spec.nodeName and no PodScheduled
// condition with status True (a scheduler sets both on a bind; a pod that
// ran has them). Says nothing about who held it: a gate or its scheduler.
bool NeverScheduled(const nlohmann::json& pod);

// gang.minCount of a schedulingPolicy holder (a PodGroup spec or a Workload
// template); nullopt when the policy is not gang or has no integer minCount.
std::optional<std::int64_t> GangMinCount(const nlohmann::json& policy_holder);

// "ns/name".
std::string Key(std::string_view ns, std::string_view name);
// Splits "ns/name"; false when there is no '/'.
bool SplitKey(std::string_view key, std::string* ns, std::string* name);

// The Deployment name a derived object name points at: the text before the
// last '-' ("web-7cb9669c75" -> "web"); "" when there is no '-'. ReplicaSets,
// PodGroups and Workloads of a Deployment are all named "<deployment>-<hash>"
// (Workload names of very long Deployments are truncated: callers prefer
// ownerReferences and use this only as a fallback).
std::string StripHashSuffix(std::string_view name);

}  // namespace wasd::objects

#endif  // WASD_OBJECTS_OBJECT_UTIL_H_
