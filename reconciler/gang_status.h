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
//   BoundBeforeGroup  a Warning Event when the count of members bound
//                   while their group did not exist (Counts::bound_before_group)
//                   grows: the backend's scheduler does not hold such pods,
//                   and the message names the switch --pod-hold=<backend>=gate.
//   metrics         wasd_gang_members{namespace,deployment,state},
//                   wasd_gangs{reason}, wasd_gang_pending_seconds (histogram:
//                   first member created → the gang is Scheduled); series
//                   of a Deployment are dropped when it goes (Forget).
//
// Settling (--gang-status-delay; 0 turns it off): a gang on its way passes
// through transient reasons in milliseconds (PodGroupMissing, then
// WaitingForQuorum with counts that move as members are created and their
// gates lifted). A condition that is not Scheduled is written only once the
// Deployment's GangScheduled entry has been out of date for the settle time;
// Update then asks to be called again when it elapses (the doctor's requeue),
// and writes what is true then. Scheduled is written at once. A gang that is
// created and placed within the settle time costs one write (Scheduled) and
// one Event; a gang that stays pending gets its condition and Event after the
// settle time.
//
// A Deployment whose objects did not change since a diagnosis found its
// condition up to date is not diagnosed again (InputsFingerprint): a resync
// costs a hash of resourceVersions per gang, not a copy and a Diagnose.
// And while a gang settles towards a condition other than Scheduled, a look
// diagnoses it only when it could be Scheduled (doctor::MayBeScheduled: no
// member of the current ReplicaSet without a node); the others wait for the
// look at the end of the settle time, so a gang being created costs that
// look and not one per batch of its events (its wasd_gang_members move then).
//
// Inputs: the planner's input from the caches (Deployment, ReplicaSets,
// pods, group objects, Workload; borrowed as doctor::GangView, never
// copied), the pods' PodScheduled condition (no
// Event informer: the scheduler's verdict is on the pod already watched),
// and — only when that first diagnosis is Unschedulable or ScaleUpPending —
// Nodes and the pods bound to them (`fit`: Caches::FitInputs) for the fit
// preview.
// Those two informers start on the first such diagnosis, not at start-up: a
// cluster whose gangs are placed never lists its Nodes. Until they have
// synced the gang's condition waits (a re-diagnosis every kGangRecheck, at
// most kFitSyncWait; then it is written without the preview). Any other gang costs one Diagnose
// over its own objects.
//
// The pure parts (GangCondition, ConditionPatch, GangEventLimiter) are
// tested in tests/reconciler/gang_status_test.cc.
//
// Thread-safe: Update/Forget/Render from any thread.
#ifndef WASD_RECONCILER_GANG_STATUS_H_
#define WASD_RECONCILER_GANG_STATUS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "doctor/diagnosis.h"
#include "metrics/exposition.h"
#include "planner/plan.h"
#include "reconciler/api.h"
#include "reconciler/events.h"
#include "reconciler/gang_member_series.h"
#include "reconciler/metrics.h"
#include "runtime/log.h"

namespace wasd::reconciler {

inline constexpr std::string_view kGangScheduledType = "GangScheduled";
// Gang Events per Deployment: this many in a row (a gang's life — created,
// gated, placed, a rollout, a scale-up — changes reason 3 to 6 times), then
// one per refill: a flapping gang posts at most 60 an hour.
inline constexpr int kGangEventBurst = 8;
inline constexpr std::chrono::seconds kGangEventRefill{60};
// The member states of wasd_gang_members (a fixed set: the series per
// Deployment are bounded).
inline constexpr std::string_view kGangMemberStates[] = {
    "created", "gated", "gated_other", "bound", "running", "failed", "bound_before_group"};
// The Warning Event of a member bound while its group did not exist
// (docs/design.md Q23): the scheduler does not hold such a pod, so the
// backend needs wasd's gate.
inline constexpr std::string_view kBoundBeforeGroupReason = "BoundBeforeGroup";

// The BoundBeforeGroup Event's message for diagnosis `d` (its counts say how
// many): names the switch --pod-hold=<backend>=gate. Pure.
std::string BoundBeforeGroupMessage(const doctor::Diagnosis& d);
// Buckets (seconds) of wasd_gang_pending_seconds: 1 s to 1 h.
inline constexpr std::array<double, 10> kGangPendingBuckets = {1,   5,   15,  30,   60,
                                                               120, 300, 600, 1800, 3600};

// Re-diagnose this soon while the fit preview's informers sync (a Node list
// is one request; 250 ms keeps the first Unschedulable condition close to
// the scheduler's verdict) and after a patch refused for a stale cache (the
// watch brings the newer Deployment within milliseconds).
inline constexpr std::chrono::milliseconds kGangRecheck{250};
// Give up waiting for the fit preview's informers after this long (Nodes
// not readable): the condition goes out without the preview.
inline constexpr std::chrono::milliseconds kFitSyncWait{10'000};

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

// How long a condition that differs from the Deployment's waits before it
// is written: zero for Scheduled (`c.status` "True") or without settling
// (`settle` <= 0); else what remains of `settle` since `stale_since`, when
// the Deployment's entry was first seen out of date (zero once it passed).
// Pure.
std::chrono::milliseconds SettleWait(const GangCondition& c,
                                     std::chrono::steady_clock::time_point stale_since,
                                     std::chrono::steady_clock::time_point now,
                                     std::chrono::milliseconds settle);

// The objects a diagnosis reads, in one number: the uid and resourceVersion
// of the Deployment and of each ReplicaSet, pod, group object and Workload,
// and `api_served`. Equal fingerprints: the same diagnosis (Diagnose is pure;
// the fit preview, which reads more, is never skipped). A 64-bit hash: a
// collision costs one skipped diagnosis until the next change. Pure.
std::uint64_t InputsFingerprint(const planner::PlanInput& observed, bool api_served);

// Per-Deployment token bucket for gang Events. Not thread-safe (GangStatus
// guards it); at most kMaxRememberedEvents Deployments remembered, by a 64-bit
// digest of the UID (two UIDs with one digest share a bucket).
class GangEventLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  bool Admit(const std::string& uid, Clock::time_point now);

 private:
  struct Bucket {
    double tokens = kGangEventBurst;
    Clock::time_point at;
  };
  std::map<std::uint64_t, Bucket> buckets_;
};

// What Update did: `status` not ok is a failed patch (the caller requeues
// with backoff); `recheck`: diagnose this Deployment again after this long
// (settling, the fit preview's informers syncing, a stale cache); `wrote`: the
// condition was patched.
struct GangUpdate {
  base::Status status;
  std::optional<std::chrono::milliseconds> recheck;
  bool wrote = false;
};

// The fit preview's inputs: fills every Node and bound pod (shared, as the
// caches hold them) and returns true, or false while they are not known yet
// (Caches::FitInputs).
using FitInputsFn = std::function<bool(std::vector<objects::Object>* nodes,
                                       std::vector<objects::Object>* bound_pods)>;

class GangStatus {
 public:
  using Clock = std::chrono::steady_clock;
  // `facts`: the reconciler's cluster facts (--volcano-topology-tiers, ...),
  // which the diagnosis needs to judge what a backend can express; must
  // outlive this object. `settle`: --gang-status-delay (see the header
  // comment). `now`: the clock of settling and of the fit wait (tests inject one).
  GangStatus(
      Api& api, EventRecorder& events, const runtime::Logger& log,
      const workloadbuilder::ClusterFacts& facts, std::chrono::milliseconds settle,
      std::function<Clock::time_point()> now = [] { return Clock::now(); })
      : api_(api),
        events_(events),
        log_(log),
        facts_(facts),
        settle_(settle),
        now_(std::move(now)),
        pending_(std::vector<double>(kGangPendingBuckets.begin(), kGangPendingBuckets.end())) {}

  // Diagnoses Deployment ns/name and publishes it: the condition when the
  // cached Deployment does not say it already, an Event on a reason change.
  // `observed`: the Deployment's objects (Caches::Assemble). `api_served`:
  // the Deployment's backend API is served. `fit`: called only for an
  // Unschedulable or ScaleUpPending diagnosis. A stale cache (failed `test`)
  // is not an error: it asks for a recheck.
  GangUpdate Update(const planner::PlanInput& observed, const std::string& ns,
                    const std::string& name, bool api_served, const FitInputsFn& fit);
  // The Deployment is gone: its series go too.
  void Forget(const std::string& ns, const std::string& name);
  // Which gangs get wasd_gang_members series (default: not Scheduled, at
  // most kDefaultGangMemberMaxGangs in namespace/name order; 0: no limit).
  void SetMemberSeries(GangMemberSeries mode, std::size_t max_gangs) {
    member_series_ = mode;
    member_max_gangs_ = max_gangs;
  }
  // Appends the wasd_gang_* families; `not_admitted` Deployments (not
  // reconciled, so not here: Caches::CountNotAdmitted) are counted in
  // wasd_gangs under doctor::kNotAdmitted.
  void Render(std::string* out, std::int64_t not_admitted = 0) const;

  std::uint64_t patches() const;
  std::uint64_t events() const;

 private:
  // What Publish needs of a diagnosis.
  struct Verdict {
    GangCondition condition;
    doctor::Counts counts;
    std::string next_step;
    std::optional<double> pending_seconds;  // PendingSeconds of the diagnosis
  };
  // One per opted-in Deployment, for as long as it exists: kept small (the
  // reason a view of doctor::kAllReasons).
  GangMemberSeries member_series_ = GangMemberSeries::kNotScheduled;
  std::size_t member_max_gangs_ = kDefaultGangMemberMaxGangs;
  struct Published {
    std::string_view reason;  // "" until diagnosed
    doctor::Counts counts;
    // When the Deployment's GangScheduled entry was first seen out of date
    // (settling), and when this gang first waited for the fit preview's
    // informers; unset when not.
    std::optional<Clock::time_point> stale_since;
    std::optional<Clock::time_point> fit_wait_since;
    // InputsFingerprint of the last diagnosis that found the Deployment's
    // condition up to date (0: none): the same inputs again (a resync, an
    // event that changed nothing the doctor reads) skip the diagnosis.
    std::uint64_t settled_inputs = 0;
  };
  // How long the gang's owed condition (not Scheduled: that one is written
  // at once) still settles; nullopt when none is owed or its time is up.
  std::optional<std::chrono::milliseconds> SettleLeft(const std::string& key,
                                                      Clock::time_point now) const;
  // Writes `v` (the condition when it differs from `deployment`'s; the Event
  // on a reason change). `fingerprint`: the inputs' InputsFingerprint, kept
  // when the condition is found up to date (0: do not keep).
  // Posts the Warning BoundBeforeGroup when `d` counts more members bound
  // before their group than the last diagnosis published for `key`.
  void ReportBoundBeforeGroup(const doctor::Diagnosis& d, const nlohmann::json& deployment,
                              const std::string& key);
  GangUpdate Publish(const Verdict& v, const nlohmann::json& deployment, const std::string& key,
                     Clock::time_point now, std::uint64_t fingerprint);
  // The diagnosis of `in`, with the fit preview when it needs one; nullopt
  // while the preview's informers sync (the caller rechecks).
  std::optional<doctor::Diagnosis> DiagnoseWithFit(doctor::GangView& in, const FitInputsFn& fit,
                                                   const std::string& key, Clock::time_point now);
  Api& api_;
  EventRecorder& events_;
  const runtime::Logger& log_;
  const workloadbuilder::ClusterFacts& facts_;
  const std::chrono::milliseconds settle_;
  const std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::map<std::string, Published> gangs_;  // "ns/name" → last diagnosis; guarded by mu_
  GangEventLimiter limiter_;                // guarded by mu_
  std::uint64_t patches_ = 0;               // guarded by mu_
  std::uint64_t events_posted_ = 0;         // guarded by mu_
  metrics::Histogram pending_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_GANG_STATUS_H_
