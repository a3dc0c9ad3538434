// What `wasd migrate --apply` watches while it hands a Deployment over:
// which scheduling objects belong to a Deployment (found by ownership, never
// by name alone), and whether a Deployment's pods are Available.
//
// The same ownership rule finds wasd's old objects (to see them go) and the
// in-tree controller's new ones (to see them come): a Workload controlled by
// the Deployment; the ReplicaSets controlled by it; a PodGroup controlled by
// one of those ReplicaSets (or by one remembered from before they were
// deleted) or owned by one of those Workloads.
//
// Pure functions over JSON values; no I/O. Thread-safe.
#ifndef WASD_MIGRATE_OBJECTS_H_
#define WASD_MIGRATE_OBJECTS_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace wasd::migrate {

struct ObjectRef {
  std::string kind;  // "ReplicaSet", "Workload", "PodGroup"
  std::string name;
  std::string uid;

  // "Workload web-x2b4" (kind and name).
  std::string Text() const { return kind + " " + name; }
  bool operator==(const ObjectRef&) const = default;
};

struct Owned {
  std::vector<ObjectRef> replicasets;
  std::vector<ObjectRef> workloads;
  std::vector<ObjectRef> podgroups;

  bool empty() const { return replicasets.empty() && workloads.empty() && podgroups.empty(); }
  // Every object, ReplicaSets first.
  std::vector<ObjectRef> All() const;
  // "ReplicaSet a, Workload b, PodGroup c" or "none".
  std::string Text() const;
};

// The objects of the Deployment with `deployment_uid` among the listed ones
// (one namespace). `known_replicaset_uids` adds ReplicaSets seen earlier that
// may be gone now: their PodGroups still count. Objects without a uid are
// ignored.
Owned OwnedBy(std::string_view deployment_uid,
              const std::vector<std::string>& known_replicaset_uids,
              const std::vector<nlohmann::json>& replicasets,
              const std::vector<nlohmann::json>& workloads,
              const std::vector<nlohmann::json>& podgroups);

// The in-tree controller's objects of the Deployment `deployment_name`
// (uid `deployment_uid`): OwnedBy's, and besides ownerReferences the spec
// references KEP-5547 describes, since upstream has not fixed which it
// sets (L6): a Workload whose spec.controllerRef names the Deployment (kind
// Deployment, apiGroup apps or none, the name; its uid when it carries one),
// and a PodGroup whose spec.workloadRef names one of those Workloads. Used
// only for the new Deployment: a name match is evidence there, while wasd's
// objects of the old one are told by uid alone (OwnedBy).
Owned InTreeOwnedBy(std::string_view deployment_name, std::string_view deployment_uid,
                    const std::vector<nlohmann::json>& replicasets,
                    const std::vector<nlohmann::json>& workloads,
                    const std::vector<nlohmann::json>& podgroups);

// "" when the Deployment's current generation is rolled out and Available
// (status.observedGeneration >= metadata.generation, updatedReplicas,
// availableReplicas and replicas equal to spec.replicas, condition Available
// True); otherwise what is still missing, e.g. "2 of 3 replicas available".
std::string NotAvailableWhy(const nlohmann::json& deployment);

}  // namespace wasd::migrate

#endif  // WASD_MIGRATE_OBJECTS_H_
