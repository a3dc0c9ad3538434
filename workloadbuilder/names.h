// Names of the objects wasd creates (docs/api.md §c.1, §c.2; docs/design.md Q4, Q6).
//
//  - Workload: GenerateWorkloadName(deployment name, deployment UID), the
//    scheme Kubernetes' Job integration uses: `<owner>-<hash of the UID>`,
//    at most 253 bytes.
//  - The Workload's single PodGroupTemplate: kPodGroupTemplateName ("pgt-0",
//    always a valid DNS label whatever the Deployment's name).
//  - PodGroup: PodGroupName(replicaset name, replicaset UID) — the Workload
//    scheme applied to the ReplicaSet (docs/design.md Q12, a deviation from the
//    KEP's bare ReplicaSet name): a ReplicaSet deleted and re-created under
//    the same name gets a new PodGroup name, so its pods never name the old
//    PodGroup while podgroup-protection keeps that one Terminating.
//
// Pure functions; thread-safe.
#ifndef WASD_WORKLOADBUILDER_NAMES_H_
#define WASD_WORKLOADBUILDER_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace wasd::workloadbuilder {

inline constexpr std::string_view kPodGroupTemplateName = "pgt-0";

// Longest object name Kubernetes accepts for Workloads (a DNS subdomain).
inline constexpr std::size_t kMaxObjectNameLength = 253;

// 32-bit FNV-1a of `data` (offset basis 2166136261, prime 16777619).
std::uint32_t Fnv1a32(std::string_view data);

// Kubernetes' "safe encoding" of a hash: the decimal digits of `hash`, each
// mapped through the consonant/digit alphabet "bcdfghjklmnpqrstvwxz2456789"
// (avoids vowels, so no words, and avoids look-alikes).
std::string SafeEncodeHash(std::uint32_t hash);

// The Workload name for an owner. The hash is FNV-1a over "(types.UID)<uid>"
// (how Kubernetes' hash dumper prints a UID value), safe-encoded. An empty
// owner name yields the hash alone; otherwise the owner name is cut to leave
// room for "-<hash>" within 253 bytes. Never fails.
// Examples: ("job", "uid-1") → "job-647cf7d9"; ("", "uid-1") → "647cf7d9".
std::string GenerateWorkloadName(std::string_view owner_name, std::string_view owner_uid);

// The PodGroup name of a ReplicaSet incarnation (Q12): the same encoding as
// GenerateWorkloadName, over the ReplicaSet's name and UID. The pod webhook
// computes it from the pod's controller ownerReference, the reconciler from
// the ReplicaSet; both must agree.
inline std::string PodGroupName(std::string_view replicaset_name, std::string_view replicaset_uid) {
  return GenerateWorkloadName(replicaset_name, replicaset_uid);
}

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_NAMES_H_
