// Executor: carries out a Plan against the API server, in order, and stops at
// the first write that fails. Creates are get-or-create (AlreadyExists →
// GET, recorded, and the caller plans again — never a second object);
// patches carry `test` operations and deletes a UID precondition, so a
// failure means the world moved: the object is re-read and the caller plans
// again. Every answer is recorded in RecentWrites so the next plan sees it
// before the watch does. Q11 (claims stripped) is checked on each created
// Workload and PodGroup. A PodGroup is deleted only after a live GET of its
// ReplicaSet confirms it is at zero, Terminating or gone (Q13), with uid and
// resourceVersion preconditions. A PodGroup of someone else's is released
// (its podgroup-protection finalizer removed) only after a live list of the
// namespace's pods confirms what the plan saw. PodGroup actions go to the resource of the
// plan's backend (Plan::backend → GroupResource). A create the API server refuses for good
// (403, 422, a terminating namespace) records a Warning Event
// (FailedWorkloadCreate / FailedPodGroupCreate) besides the retry.
//
// Before every write it asks `may_write` (the leader check): a replica that
// lost the Lease mid-plan stops there.
//
// Thread-safe: Execute() may run concurrently for different Deployments.
#ifndef WASD_RECONCILER_EXECUTOR_H_
#define WASD_RECONCILER_EXECUTOR_H_

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/status.h"
#include "planner/plan.h"
#include "reconciler/api.h"
#include "reconciler/events.h"
#include "reconciler/metrics.h"
#include "reconciler/recent_writes.h"
#include "runtime/log.h"

namespace wasd::reconciler {

struct ExecuteOutcome {
  base::Status status;      // not ok: a write failed for a reason planning again cannot fix now
  bool replan = false;      // an answer changed what we know: plan again
  bool not_leader = false;  // stopped because this replica may no longer write
  std::optional<std::chrono::milliseconds> requeue_after;
  int writes = 0;  // successful writes (events excluded)
};

class Executor {
 public:
  Executor(Api& api, RecentWrites& recent, EventRecorder& events, Metrics& metrics,
           const runtime::Logger& log, std::function<bool()> may_write)
      : api_(api),
        recent_(recent),
        events_(events),
        metrics_(metrics),
        log_(log),
        may_write_(std::move(may_write)) {}

  // `seen_deleted(ns, name)`: whether a Workload or PodGroup of that name
  // was seen deleted lately (Caches::deleted). Given, a create whose object
  // never was trusts the cached owner the plan was made from and skips the
  // live read of the owner (OwnerAlive); not given, every create reads it.
  void TrustCachedOwners(std::function<bool(const std::string&, const std::string&)> seen_deleted) {
    seen_deleted_ = std::move(seen_deleted);
  }

  // `scheduling`: the scheduling.k8s.io version in use (scheduling_api.h),
  // for the native backend's Workloads and PodGroups.
  ExecuteOutcome Execute(const nlohmann::json& deployment, const planner::Plan& plan,
                         const SchedulingApi& scheduling = SchedulingApi{"v1beta1"});

 private:
  // Each returns false when execution must stop (outcome says why).
  // `workloads`: the Workload resource in use; `groups`: the PodGroup
  // resource of the plan's backend (GroupResource).
  bool Create(const nlohmann::json& deployment, const planner::Action& action,
              const kube::Resource& workloads, const kube::Resource& groups, ExecuteOutcome& out);
  bool Patch(const nlohmann::json& deployment, const planner::Action& action,
             const kube::Resource& workloads, const kube::Resource& groups, ExecuteOutcome& out);
  bool DeletePodGroup(const nlohmann::json& deployment, const planner::Action& action,
                      const kube::Resource& groups, ExecuteOutcome& out);
  bool ReleasePodGroup(const nlohmann::json& deployment, const planner::Action& action,
                       const kube::Resource& groups, ExecuteOutcome& out);
  // Before releasing a PodGroup that is not ours (Q14 extended): true when a
  // live list of the namespace's pods shows that every unfinished pod naming
  // it is a never-run pod, gated by wasd, of one of action.owner_uids (wasd's
  // caches hold only its own pods). Otherwise false: a Warning Event
  // PodGroupTerminating names the pod that keeps it and `out` asks for a
  // look again after kTerminatingRecheck; or the list failed (`out` carries
  // the error).
  bool OnlyOurPodsName(const nlohmann::json& deployment, const planner::Action& action,
                       ExecuteOutcome& out);
  // Q13: true when the live ReplicaSet still needs the PodGroup (or the read
  // failed: `out` carries the error), so the delete must not happen.
  bool OwnerStillNeeds(const std::string& ns, const planner::Action& action, ExecuteOutcome& out);
  void ReportStrippedClaims(const nlohmann::json& deployment, const planner::Action& action,
                            const nlohmann::json& stored);
  // After a failed conditional write: re-read the object and record it.
  // False when the controller owner of `object` (a Deployment or ReplicaSet)
  // is gone, replaced (other UID) or being deleted, by a live GET (skipped,
  // true, when TrustCachedOwners says the object's name was never deleted).
  bool OwnerAlive(const std::string& ns, const nlohmann::json& object);
  void Refresh(Kind kind, const kube::Resource& resource, const std::string& ns,
               const std::string& name);

  Api& api_;
  RecentWrites& recent_;
  EventRecorder& events_;
  Metrics& metrics_;
  const runtime::Logger& log_;
  std::function<bool()> may_write_;
  std::function<bool(const std::string&, const std::string&)> seen_deleted_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_EXECUTOR_H_
