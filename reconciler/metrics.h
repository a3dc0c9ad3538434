// Metrics: the reconciler's Prometheus metrics (text exposition format 0.0.4).
// docs/metrics.md is the table of record; in short:
//
// wasd's own names (a contract since the first release):
//   wasd_reconciler_reconciles_total{result="success|error"}  counter
//   wasd_reconciler_errors_total                              counter (failed reconciles)
//   wasd_reconciler_writes_total{action}                      counter (API writes by plan action)
//   wasd_reconciler_api_requests_total{verb,code}             counter (code "0" = no answer)
//   wasd_reconciler_queue_depth                               gauge
//   wasd_reconciler_queue_latency_seconds                     histogram (ready → picked up)
//   wasd_reconciler_reconcile_duration_seconds                histogram
//   wasd_reconciler_leader                                    gauge (1 while this replica leads)
//   wasd_reconciler_scheduling_api_served                     gauge
//   wasd_reconciler_scheduling_api_version{version}           gauge
//   wasd_reconciler_gated_pods                                gauge (pods held by
//   wasd.io/pod-group) wasd_reconciler_oldest_gated_pod_age_seconds              gauge
// controller-runtime's and client-go's names, so existing controller
// dashboards and alerts apply (controller="wasd", name="wasd"). The six that
// count what a wasd_reconciler_* family counts (reconcile_total,
// reconcile_errors_total, reconcile_time_seconds, workqueue_depth,
// workqueue_queue_duration_seconds, leader_election_master_status) are
// deprecated (docs/support.md): exported while SetControllerRuntimeNames(true)
// (--controller-runtime-metrics: on by default in 0.1, off from 0.2.0,
// removed in 0.3.0 at the earliest), their HELP starting "DEPRECATED:":
//   controller_runtime_reconcile_total{controller,result}     counter
//   controller_runtime_reconcile_errors_total{controller}     counter
//   controller_runtime_reconcile_time_seconds{controller}     histogram
//   controller_runtime_max_concurrent_reconciles{controller}  gauge
//   controller_runtime_active_workers{controller}             gauge
//   workqueue_depth, workqueue_adds_total, workqueue_retries_total,
//   workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
//   workqueue_unfinished_work_seconds,
//   workqueue_longest_running_processor_seconds{controller,name}
//   leader_election_master_status{name="wasd-reconciler"}     gauge
// and the process_* families and wasd_build_info (metrics/process_metrics.h).
//
// Thread-safe: every method may be called from any thread.
#ifndef WASD_RECONCILER_METRICS_H_
#define WASD_RECONCILER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "metrics/exposition.h"

namespace wasd::reconciler {

// The controller and work queue label of the controller-runtime names.
inline constexpr std::string_view kControllerName = "wasd";
// The `name` label of leader_election_master_status: the Lease's name.
inline constexpr std::string_view kLeaseName = "wasd-reconciler";

// Buckets (seconds) of the reconciler's histograms, from 1 ms to 60 s: API
// calls take milliseconds; a reconcile with many gate lifts, or a key that
// waited behind a backoff, takes seconds.
inline constexpr std::array<double, 12> kReconcilerBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                              0.25,  0.5,   1,    2.5,   10,   60};

// The work queue's counters, read at scrape time.
struct QueueStats {
  std::size_t depth = 0;      // keys ready to be processed
  std::uint64_t adds = 0;     // keys queued (not counting duplicates merged)
  std::uint64_t retries = 0;  // rate-limited re-adds after a failed reconcile
};

// Pods held by the wasd.io/pod-group gate, read at scrape time.
struct GatedPods {
  std::size_t count = 0;
  // creationTimestamp of the oldest one, Unix seconds.
  std::optional<std::int64_t> oldest_created_unix;
};

class Metrics {
 public:
  // How one reconcile ended (controller_runtime_reconcile_total{result}).
  enum class Outcome { kSuccess, kError, kRequeueAfter };
  using Clock = std::chrono::steady_clock;

  Metrics();

  // A worker starts a reconcile; pass the returned time to ReconcileFinished.
  Clock::time_point ReconcileStarted();
  void ReconcileFinished(Clock::time_point started, Outcome outcome);

  void CountWrite(std::string_view action);
  void CountApiRequest(std::string_view verb, int code);
  void ObserveQueueLatency(std::chrono::nanoseconds d);
  void SetLeader(bool leader) { leader_ = leader; }
  void SetSchedulingApiServed(bool served) { api_served_ = served; }
  // The scheduling.k8s.io version wasd uses for Workloads and PodGroups
  // ("v1", "v1beta1"; "" none): wasd_reconciler_scheduling_api_version
  // {version} is 1 for it and 0 for the others.
  void SetSchedulingApiVersion(std::string_view version);
  void SetWorkers(int workers) { workers_ = workers; }
  // Whether the six deprecated duplicate families are rendered (default true).
  void SetControllerRuntimeNames(bool on) { controller_runtime_names_ = on; }
  // Read at render time.
  void SetQueueStatsSource(std::function<QueueStats()> fn);
  void SetGatedPodsSource(std::function<GatedPods()> fn);
  // Appends more families at render time (the gang doctor's wasd_gang_*).
  void SetExtraSource(std::function<void(std::string*)> fn);

  std::uint64_t writes() const;
  std::uint64_t reconciles() const;

  // The whole exposition text; `now_unix` is the wall clock (for the age of
  // the oldest gated pod).
  std::string Render() const;
  std::string Render(std::int64_t now_unix, Clock::time_point now) const;

 private:
  // Everything one scrape shows, read under one lock (and each histogram read
  // once), so the families that count the same work under two names agree.
  struct Snapshot {
    std::uint64_t ok = 0;
    std::uint64_t error = 0;
    std::uint64_t requeue_after = 0;
    std::map<std::string, std::uint64_t, std::less<>> writes;
    std::map<std::pair<std::string, int>, std::uint64_t> api_requests;
    std::string scheduling_version;
    double unfinished = 0;  // seconds, summed over running reconciles
    double longest = 0;     // seconds, the longest running reconcile
    int active = 0;
    bool leader = false;
    bool api_served = false;
    int workers = 1;
    metrics::Histogram::Snapshot queue_latency;
    metrics::Histogram::Snapshot reconcile_duration;
  };
  Snapshot Take(Clock::time_point now) const;
  void RenderOwn(std::string* out, const Snapshot& s, const QueueStats& q, const GatedPods& g,
                 std::int64_t now_unix) const;
  void RenderControllerRuntime(std::string* out, const Snapshot& s, const QueueStats& q) const;

  mutable std::mutex mu_;
  std::uint64_t reconcile_ok_ = 0;                            // guarded by mu_
  std::uint64_t reconcile_error_ = 0;                         // guarded by mu_
  std::uint64_t reconcile_requeue_after_ = 0;                 // guarded by mu_ (also counted in ok)
  std::map<std::string, std::uint64_t, std::less<>> writes_;  // guarded by mu_
  std::map<std::pair<std::string, int>, std::uint64_t> api_requests_;  // guarded by mu_
  std::map<Clock::time_point, int> running_;  // start time -> reconciles begun then; guarded by mu_
  std::function<QueueStats()> queue_stats_;   // guarded by mu_
  std::function<GatedPods()> gated_pods_;     // guarded by mu_
  std::function<void(std::string*)> extra_;   // guarded by mu_
  std::string scheduling_version_;            // guarded by mu_
  metrics::Histogram queue_latency_;
  metrics::Histogram reconcile_duration_;
  std::atomic<bool> leader_{false};
  std::atomic<bool> api_served_{false};
  std::atomic<int> workers_{1};
  std::atomic<bool> controller_runtime_names_{true};
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_METRICS_H_
