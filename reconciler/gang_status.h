// GangStatus: the gang doctor (doctor::Diagnose) run by the reconciler after
// each reconcile of an opted-in Deployment, published three ways:
//
//   the condition   status.conditions[type=GangScheduled] on the Deployment
//                   (True when every created member is bound; reason = the
//                   diagnosis reason; message = its counts, plus the fit
//                   preview when Unschedulable, as Diagnose words it), written with a JSON patch of
//                   that one entry on deployments/status — never the whole
//                   status, so the Deployment controller's own conditions
//                   (Available, Progressing, ReplicaFailure) are never
//                   touched — and only when it differs from the cached
//                   Deployment's (a steady state writes nothing).
//                   lastTransitionTime moves only when the status does.
//                   No observedGeneration: apps/v1 DeploymentCondition has
//                   no such field and the API server would drop it.
//   an Event        on each reason change (Normal for Scheduled, Warning
//                   otherwise), at most kGangEventBurst per Deployment in a
//                   row and then one per kGangEventRefill, through the
//                   EventRecorder (whose repeat filter also applies) — except
//                   for a reason whose fact the reconciler already announces
//                   with a Warning of its own (AnnouncedByReconciler): one
//                   Event per fact, and the one that names what wasd does
//                   about it (and covers every ReplicaSet, not only the
//                   current one) is the planner's.
//   metrics         wasd_gang_members{namespace,deployment,state},
//                   wasd_gangs{reason}, wasd_gang_pending_seconds (histogram:
//                   first member created → the gang is Scheduled); series
//                   of a Deployment are dropped when it goes (Forget).
//
// Inputs: the planner's input from the caches (Deployment, ReplicaSets,
// pods, group objects, Workload), the pods' PodScheduled condition (no
// Event informer: the scheduler's verdict is on the pod already watched),
// and — only when that first diagnosis is Unschedulable or ScaleUpPending —
// Nodes and the pods bound to them (Caches::EnableGangStatus) for the fit
// preview. Any other gang costs one Diagnose over its own objects.
//
// The pure parts (GangCondition, ConditionPatch, GangEventLimiter) are
// tested in tests/reconciler/gang_status_test.cc.
//
// Thread-safe: Update/Forget/Render from any thread.
#ifndef WASD_RECONCILER_GANG_STATUS_H_
#define WASD_RECONCILER_GANG_STATUS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/status.h"
#include "doctor/diagnosis.h"
#include "metrics/exposition.h"
#include "planner/plan.h"
#include "reconciler/api.h"
#include "reconciler/events.h"
#include "reconciler/metrics.h"

namespace wasd::reconciler {

class Caches;

inline constexpr std::string_view kGangScheduledType = "GangScheduled";
// Gang Events per Deployment: this many in a row (a gang's life — created,
// gated, placed, a rollout, a scale-up — changes reason 3 to 6 times), then
// one per refill: a flapping gang posts at most 60 an hour.
inline constexpr int kGangEventBurst = 8;
inline constexpr std::chrono::seconds kGangEventRefill{60};
// The member states of wasd_gang_members (a fixed set: the series per
// Deployment are bounded).
inline constexpr std::string_view kGangMemberStates[] = {"created", "gated",   "gated_other",
                                                         "bound",   "running", "failed"};
// Buckets (seconds) of wasd_gang_pending_seconds: 1 s to 1 h.
inline constexpr std::array<double, 10> kGangPendingBuckets = {1,   5,   15,  30,   60,
                                                               120, 300, 600, 1800, 3600};

struct GangCondition {
  std::string status;  // "True" | "False"
  std::string reason;
  std::string message;
};

// True for the reasons whose fact the reconciler reports with its own
// Warning Event, so the doctor posts none: ForeignObject,
// PodGroupTerminating and InvalidSchedulingConfiguration (the planner's,
// planner/plan.h), APINotAvailable (the controller's APINotServed). Pure.
bool AnnouncedByReconciler(std::string_view reason);

// The condition the diagnosis asks for. Pure.
GangCondition ConditionFor(const doctor::Diagnosis& d);

// The existing GangScheduled entry of `deployment` (null when none).
const nlohmann::json* FindGangCondition(const nlohmann::json& deployment);

// The RFC 6902 patch for deployments/status that makes the Deployment's
// GangScheduled entry say `c`, or nullopt when `deployment` (as cached)
// already says it. Replacing an entry `test`s its index still holds
// GangScheduled; adding one appends to the array (or creates it, then
// `test`ing the cached resourceVersion so no concurrent condition is lost).
// `now` is RFC 3339. Pure.
std::optional<nlohmann::json> ConditionPatch(const nlohmann::json& deployment,
                                             const GangCondition& c, std::string_view now);

// Per-Deployment token bucket for gang Events. Not thread-safe (GangStatus
// guards it); at most kMaxRememberedEvents Deployments remembered.
class GangEventLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  bool Admit(const std::string& uid, Clock::time_point now);

 private:
  struct Bucket {
    double tokens = kGangEventBurst;
    Clock::time_point at;
  };
  std::map<std::string, Bucket> buckets_;
};

class GangStatus {
 public:
  // `facts`: the reconciler's cluster facts (--volcano-topology-tiers, ...),
  // which the diagnosis needs to judge what a backend can express; must
  // outlive this object.
  GangStatus(Api& api, EventRecorder& events, const base::Logger& log,
             const workloadbuilder::ClusterFacts& facts)
      : api_(api),
        events_(events),
        log_(log),
        facts_(facts),
        pending_(std::vector<double>(kGangPendingBuckets.begin(), kGangPendingBuckets.end())) {}

  // Diagnoses Deployment ns/name from `caches` and publishes it. `api_served`:
  // the Deployment's backend API is served. An error is a failed patch (the
  // caller requeues); a stale cache (failed `test`) is not an error.
  // `observed`: the Deployment's objects as the reconcile last read them
  // (Caches::Assemble; no second read of the caches).
  base::Status Update(const Caches& caches, const planner::PlanInput& observed,
                      const std::string& ns, const std::string& name, bool api_served);
  // The Deployment is gone: its series go too.
  void Forget(const std::string& ns, const std::string& name);
  // Appends the wasd_gang_* families.
  void Render(std::string* out) const;

  std::uint64_t patches() const;
  std::uint64_t events() const;

 private:
  struct Published {
    std::string reason;
    doctor::Counts counts;
  };
  Api& api_;
  EventRecorder& events_;
  const base::Logger& log_;
  const workloadbuilder::ClusterFacts& facts_;
  mutable std::mutex mu_;
  std::map<std::string, Published> gangs_;  // "ns/name" → last diagnosis; guarded by mu_
  GangEventLimiter limiter_;                // guarded by mu_
  std::uint64_t patches_ = 0;               // guarded by mu_
  std::uint64_t events_posted_ = 0;         // guarded by mu_
  metrics::Histogram pending_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_GANG_STATUS_H_
