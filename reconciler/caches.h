// Caches: the reconciler's list+watch view of the cluster and the mapping
// from watch events to Deployment keys.
//
//   Deployments   label wasd.io/managed=true   (resync: every object again each period)
//   ReplicaSets   label wasd.io/managed=true   index: Deployment → ReplicaSets
//   Pods          label wasd.io/managed=true   index: PodGroup name → pods naming it,
//                                              ReplicaSet → its pods
//   Workloads     all                          index: Deployment → Workloads it controls
//   PodGroups     all                          index: Workload name → PodGroups referencing it
//   <backend> PodGroups  label wasd.io/managed=true, one informer per allowed
//                 non-native backend (scheduling.volcano.sh, scheduling.run.ai,
//                 scheduling.x-k8s.io)   index: Deployment (from the name) → groups
//   Deployments   label wasd.io/managed!=true, with the gang doctor only: names
//                 and the annotation wasd.io/scheduling (CountNotAdmitted)
//
// Pods are filed under the group they name in their backend's way
// (LinkedPodGroupName: spec.schedulingGroup, an annotation or a label).
//
// Every event enqueues the key of the Deployment it concerns (if that
// Deployment is in the cache) — except a Deployment update that moved only
// its status (and resourceVersion): no planner input changed. That is the
// Deployment controller's status writes and the gang doctor's own
// GangScheduled patch, each of which would otherwise cost one more
// reconcile; a foreign edit of the GangScheduled entry is put right at the
// next reconcile (a pod or ReplicaSet event, or the resync). Workloads and PodGroups are watched
// only once discovery found the scheduling.k8s.io version that serves them
// (UseSchedulingApi; moved to another version when the cluster's changes);
// a backend's group objects only once its API is (StartGroups).
//
// Assemble() builds the planner's input for one Deployment from the caches,
// with RecentWrites applied on top.
//
// Thread-safe: Start*/Stop from the owner; everything else from any thread.
#ifndef WASD_RECONCILER_CACHES_H_
#define WASD_RECONCILER_CACHES_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <set>

#include "kube/client.h"
#include "kube/informer.h"
#include "planner/plan.h"
#include "reconciler/deleted_names.h"
#include "reconciler/metrics.h"
#include "reconciler/object_index.h"
#include "reconciler/recent_writes.h"
#include "reconciler/scheduling_api.h"
#include "workloadbuilder/backend.h"

namespace wasd::reconciler {

// Deployment `after` differs from `before` only in status (and a new
// metadata.resourceVersion): a status write, which changes no planner input.
// False for a resync's unchanged object (same resourceVersion). Pure.
bool OnlyStatusMoved(const nlohmann::json& before, const nlohmann::json& after);

class Caches {
 public:
  // `enqueue` receives "ns/name" Deployment keys, on informer threads.
  // `backends`: the allowed backends; an informer is made for the group
  // objects of each non-native one.
  Caches(kube::Client& client, std::chrono::milliseconds resync, RecentWrites& recent,
         std::function<void(const std::string&)> enqueue,
         const std::vector<workloadbuilder::Backend>& backends = {
             workloadbuilder::Backend::kNative});
  ~Caches();
  Caches(const Caches&) = delete;
  Caches& operator=(const Caches&) = delete;

  // The gang doctor's fit preview (--gang-status): makes the informers of
  // Nodes and of the pods bound to them in every namespace (projected to
  // what PodRequests reads). They start on the first FitInputs call, not
  // with StartCore: the fit preview is needed only once a gang is
  // Unschedulable or ScaleUpPending, and a cluster whose gangs are placed
  // never pays for a watch of every Node and bound pod. Before StartCore.
  void EnableGangStatus();
  void StartCore();  // Deployments, ReplicaSets, Pods
  // Workloads and PodGroups through `api` (the version discovery chose):
  // starts their informers the first time; later, a different version moves
  // both informers to it (kube::Informer::Retarget: caches kept, a relist of
  // the new path) and returns true. Same version: nothing, false.
  bool UseSchedulingApi(const SchedulingApi& api);
  // The group objects of a non-native `backend` (once; native:
  // UseSchedulingApi).
  void StartGroups(workloadbuilder::Backend backend);
  void Stop();

  bool CoreSynced() const;
  bool scheduling_started() const { return scheduling_started_; }
  bool SchedulingSynced() const;
  // StartGroups(backend) was called and its first list is in.
  bool GroupsSynced(workloadbuilder::Backend backend) const;

  // Keys of every cached Deployment.
  std::vector<std::string> DeploymentKeys() const;
  // The planner's input for Deployment ns/name (priority classes not filled).
  planner::PlanInput Assemble(const std::string& ns, const std::string& name) const;
  // The cached Deployment ns/name alone (null when none): Assemble's first
  // read, for a reader that needs nothing else (the gang doctor's recheck).
  objects::Object Deployment(const std::string& ns, const std::string& name) const;
  // The Workloads and PodGroups (any backend) whose deletion the watches
  // brought lately (deleted_names.h).
  const DeletedNames& deleted() const { return deleted_; }
  // For metrics: cached pods (not terminating) held by the wasd.io/pod-group
  // gate, and the creation time of the oldest.
  GatedPods CountGatedPods() const;
  // The gang doctor's fit preview inputs: every Node and bound pod into
  // `nodes` and `bound_pods` (as the informers hand them out). Starts the two
  // informers on the first call. False (and nothing filled) until both have
  // delivered their first list, or without EnableGangStatus. Thread-safe.
  bool FitInputs(std::vector<objects::Object>* nodes, std::vector<objects::Object>* bound_pods);
  // FitInputs was called (its informers run).
  bool fit_started() const { return fit_started_; }
  // Deployments with the annotation wasd.io/scheduling but without the
  // marker label (the webhook never admitted them: doctor::kNotAdmitted),
  // from a cache of unmarked Deployments that keeps their names and that
  // annotation only. 0 before its first list or without EnableGangStatus.
  // A count the cache's event handlers keep: a scrape decodes nothing.
  std::int64_t CountNotAdmitted() const;

 private:
  void EnqueueIfManaged(const std::string& ns, const std::string& deployment);
  void OnReplicaSet(const kube::ObjectPtr& rs, bool deleted);
  // `wake`: an update the planner must see although the pod is not gated (a
  // KAI member just bound, a link another actor rewrote).
  void OnPod(const kube::ObjectPtr& pod, bool deleted, bool wake = false);
  void TrackGated(const std::string& key, const nlohmann::json& pod, bool gated_now);
  void OnWorkload(const kube::ObjectPtr& workload, bool deleted);
  void OnPodGroup(const kube::ObjectPtr& pg, bool deleted);
  void OnBackendGroup(const kube::ObjectPtr& pg, bool deleted);
  // Enqueues the Deployment of group object `pg` (by its ReplicaSet).
  void EnqueueGroupOwner(const nlohmann::json& pg);
  // Assemble() for a Deployment of a non-native backend: its ReplicaSets,
  // their group objects (by name) and the pods naming them.
  void AssembleBackend(workloadbuilder::Backend backend, const std::string& ns,
                       const std::string& deploy_key, planner::PlanInput& in) const;

  kube::Client& client_;
  RecentWrites& recent_;
  DeletedNames deleted_;  // Workloads and PodGroups seen deleted (the executor's owner check)
  std::function<void(const std::string&)> enqueue_;
  std::unique_ptr<kube::Informer> deployments_;
  std::unique_ptr<kube::Informer> replicasets_;
  std::unique_ptr<kube::Informer> pods_;
  std::unique_ptr<kube::Informer> workloads_;
  std::unique_ptr<kube::Informer> podgroups_;
  // Group objects of the allowed non-native backends.
  std::map<workloadbuilder::Backend, std::unique_ptr<kube::Informer>> backend_groups_;
  // EnableGangStatus only; set before the informers start, started by the
  // first FitInputs (fit_started_ makes that once).
  std::unique_ptr<kube::Informer> nodes_;
  std::unique_ptr<kube::Informer> bound_pods_;
  std::atomic<bool> fit_started_{false};
  // EnableGangStatus only, started with the core informers.
  std::unique_ptr<kube::Informer> unadmitted_;
  std::atomic<std::int64_t> not_admitted_{0};  // carriers in unadmitted_
  ObjectIndex rs_by_deployment_;
  ObjectIndex pods_by_group_;
  ObjectIndex pods_by_replicaset_;  // pod → its controlling ReplicaSet
  ObjectIndex workloads_by_deployment_;
  ObjectIndex podgroups_by_workload_;
  // Non-native group objects by the Deployment their name leads to.
  ObjectIndex backend_groups_by_deployment_;
  std::atomic<bool> scheduling_started_{false};
  std::mutex start_mu_;                                 // UseSchedulingApi, StartGroups
  std::set<workloadbuilder::Backend> backend_started_;  // guarded by start_mu_
  // Live pods held by the wasd.io/pod-group gate, with their creation time
  // (Unix seconds, 0 unknown), kept from the pod events for the metrics:
  // a scrape never decodes the pod cache.
  mutable std::mutex gated_mu_;
  std::map<std::string, std::int64_t, std::less<>> gated_;  // guarded by gated_mu_
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_CACHES_H_
