// The compiler from a Deployment's scheduling configuration to the
// `scheduling.k8s.io` Workload and PodGroup objects wasd creates (docs/api.md §a.1, §a.2,
// §c.1–§c.5; docs/design.md Q4, Q5, Q10):
//
//   Deployment + config  --BuildWorkload-->  Workload (one template "pgt-0")
//   Workload + ReplicaSet --BuildPodGroup-->  PodGroup (PodGroupName(rs name, rs uid), Q12)
//
// The apiVersion of the built objects (and of a PodGroup's Workload
// ownerReference) is the caller's: the version the cluster serves, found by
// discovery (kube/scheduling_api.h); v1 and v1beta1 objects are the
// same objects, only the apiVersion string differs.
//
// The builders produce the desired object only (apiVersion, kind, metadata
// name/namespace/ownerReferences, spec); they do not validate the
// configuration — run ValidateSchedulingConfig first — but never throw on
// malformed input: a missing owner name/UID or an unusable config is an error
// result instead.
//
// Pure functions; thread-safe.
#ifndef WASD_WORKLOADBUILDER_BUILDER_H_
#define WASD_WORKLOADBUILDER_BUILDER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace wasd::workloadbuilder {

// The versions of scheduling.k8s.io that serve Workloads and PodGroups:
// v1beta1 (Kubernetes 1.37) and v1 (GA, planned for 1.38). The default of
// the builders' api_version is v1beta1, what a 1.37 cluster serves.
inline constexpr std::string_view kSchedulingApiVersionV1beta1 = "scheduling.k8s.io/v1beta1";
inline constexpr std::string_view kSchedulingApiVersionV1 = "scheduling.k8s.io/v1";

// An object or the reason it could not be built.
struct BuildResult {
  nlohmann::json object;  // the built object; null on error
  std::string error;      // empty on success

  bool ok() const { return error.empty(); }
};

struct BuildOptions {
  // Q10: the pod template's priorityClassName, set by the caller only after it
  // checked that the class exists and its value is ≤ 1,000,000,000. Copied
  // into the template as given; nothing when unset. `priority` itself is
  // never set (the API server's Priority plugin resolves it).
  std::optional<std::string> priority_class_name;
  // The Workload's apiVersion (the version in use on the cluster).
  std::string api_version = std::string(kSchedulingApiVersionV1beta1);
};

// The user's gang.minCount when the config selects gang and sets an integer
// minCount; nullopt otherwise (basic, omitted policy, or minCount unset).
std::optional<std::int64_t> ExplicitMinCount(const nlohmann::json& config);

// True when the config selects the gang policy (schedulingPolicy.gang set).
bool IsGang(const nlohmann::json& config);

// The gang minCount to compile (§c.5 step 2): the explicit value when set,
// else `replicas` when positive, else 1 (a Deployment at zero replicas).
std::int64_t ResolveMinCount(const nlohmann::json& config, std::int64_t replicas);

// The Workload for `deployment` (an apps/v1 Deployment) compiled from
// `config` (the parsed scheduling configuration, see ReadSchedulingConfig).
// Name: GenerateWorkloadName(deployment name, deployment uid). Owner: the
// Deployment (controller, blockOwnerDeletion). spec.controllerRef names the
// Deployment by apiGroup/kind/name. One PodGroupTemplate "pgt-0" with the
// resolved policy (gang.minCount from ResolveMinCount with spec.replicas,
// which defaults to 1 when absent) and the config's schedulingConstraints,
// disruptionMode and resourceClaims copied as given.
// Errors: deployment without metadata.name or metadata.uid ("a Workload must
// be owned by its controller for garbage collection"); config not an object.
BuildResult BuildWorkload(const nlohmann::json& deployment, const nlohmann::json& config,
                          const BuildOptions& options = {});

// The PodGroup for `replicaset`, materialized from `workload`'s template
// "pgt-0" (§a.2, §c.3): name PodGroupName(rs name, rs uid) (Q12), the
// ReplicaSet's namespace; owners
// [ReplicaSet (controller, blockOwnerDeletion), Workload (plain reference)];
// spec.workloadRef{workloadName, templateName}; schedulingPolicy,
// schedulingConstraints, disruptionMode, priorityClassName, priority and
// resourceClaims copied from the template.
// `api_version`: the PodGroup's apiVersion and its Workload ownerReference's
// (never the Workload object's own apiVersion, which tells only through
// which version it was read).
// Errors: ReplicaSet or Workload without name/uid; no template "pgt-0".
BuildResult BuildPodGroup(const nlohmann::json& workload, const nlohmann::json& replicaset,
                          std::string_view api_version = kSchedulingApiVersionV1beta1);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_BUILDER_H_
