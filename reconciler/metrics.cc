#include "reconciler/metrics.h"

#include "reconciler/scheduling_api.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include "metrics/process_metrics.h"

namespace wasd::reconciler {

namespace {

using metrics::AppendHeader;
using metrics::AppendSample;

constexpr std::string_view kPrefix = "wasd_reconciler_";

std::vector<double> Buckets() { return {kReconcilerBuckets.begin(), kReconcilerBuckets.end()}; }

std::string Own(std::string_view name) { return std::string(kPrefix) + std::string(name); }

// controller="wasd" (controller_runtime_*) and controller="wasd",name="wasd"
// (workqueue_*, which controller-runtime labels with both).
std::string ControllerLabel() { return "controller=\"" + std::string(kControllerName) + "\""; }
std::string QueueLabels() {
  return ControllerLabel() + ",name=\"" + std::string(kControllerName) + "\"";
}

}  // namespace

Metrics::Metrics() : queue_latency_(Buckets()), reconcile_duration_(Buckets()) {}

Metrics::Clock::time_point Metrics::ReconcileStarted() {
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mu_);
  ++running_[now];
  return now;
}

void Metrics::ReconcileFinished(Clock::time_point started, Outcome outcome) {
  reconcile_duration_.Observe(std::chrono::duration<double>(Clock::now() - started).count());
  std::lock_guard lock(mu_);
  if (auto it = running_.find(started); it != running_.end() && --it->second <= 0) {
    running_.erase(it);
  }
  switch (outcome) {
    case Outcome::kSuccess: ++reconcile_ok_; break;
    case Outcome::kRequeueAfter:
      ++reconcile_ok_;
      ++reconcile_requeue_after_;
      break;
    case Outcome::kError: ++reconcile_error_; break;
  }
}

void Metrics::CountWrite(std::string_view action) {
  std::lock_guard lock(mu_);
  auto it = writes_.find(action);
  if (it == writes_.end()) it = writes_.emplace(std::string(action), 0).first;
  ++it->second;
}

void Metrics::CountApiRequest(std::string_view verb, int code) {
  std::lock_guard lock(mu_);
  ++api_requests_[{std::string(verb), code}];
}

void Metrics::ObserveQueueLatency(std::chrono::nanoseconds d) {
  queue_latency_.Observe(std::chrono::duration<double>(d).count());
}

void Metrics::SetQueueStatsSource(std::function<QueueStats()> fn) {
  std::lock_guard lock(mu_);
  queue_stats_ = std::move(fn);
}

void Metrics::SetGatedPodsSource(std::function<GatedPods()> fn) {
  std::lock_guard lock(mu_);
  gated_pods_ = std::move(fn);
}

void Metrics::SetSchedulingApiVersion(std::string_view version) {
  std::lock_guard<std::mutex> lock(mu_);
  scheduling_version_ = std::string(version);
}

std::uint64_t Metrics::writes() const {
  std::lock_guard lock(mu_);
  std::uint64_t n = 0;
  for (const auto& [action, count] : writes_) n += count;
  return n;
}

std::uint64_t Metrics::reconciles() const {
  std::lock_guard lock(mu_);
  return reconcile_ok_ + reconcile_error_;
}

void Metrics::SetExtraSource(std::function<void(std::string*)> fn) {
  std::lock_guard lock(mu_);
  extra_ = std::move(fn);
}

std::string Metrics::Render() const {
  return Render(static_cast<std::int64_t>(std::time(nullptr)), Clock::now());
}

Metrics::Snapshot Metrics::Take(Clock::time_point now) const {
  Snapshot s;
  {
    std::lock_guard lock(mu_);
    s.ok = reconcile_ok_;
    s.error = reconcile_error_;
    s.requeue_after = reconcile_requeue_after_;
    s.writes = writes_;
    s.api_requests = api_requests_;
    s.scheduling_version = scheduling_version_;
    for (const auto& [started, n] : running_) {
      const double seconds = std::chrono::duration<double>(now - started).count();
      s.unfinished += seconds * n;
      s.longest = std::max(s.longest, seconds);
      s.active += n;
    }
  }
  s.leader = leader_;
  s.api_served = api_served_;
  s.workers = workers_;
  s.queue_latency = queue_latency_.Take();
  s.reconcile_duration = reconcile_duration_.Take();
  return s;
}

std::string Metrics::Render(std::int64_t now_unix, Clock::time_point now) const {
  std::function<QueueStats()> queue_fn;
  std::function<GatedPods()> gated_fn;
  std::function<void(std::string*)> extra_fn;
  {
    std::lock_guard lock(mu_);
    queue_fn = queue_stats_;
    gated_fn = gated_pods_;
    extra_fn = extra_;
  }
  // The sources take their own locks; call them without ours.
  const QueueStats q = queue_fn ? queue_fn() : QueueStats{};
  const GatedPods g = gated_fn ? gated_fn() : GatedPods{};
  const Snapshot s = Take(now);
  std::string out;
  out.reserve(8192);
  RenderOwn(&out, s, q, g, now_unix);
  if (extra_fn) extra_fn(&out);
  RenderControllerRuntime(&out, s, q);
  metrics::AppendProcessMetrics(&out, metrics::ReadProcessSample());
  metrics::AppendBuildInfo(&out);
  return out;
}

namespace {
// The start of the HELP of a deprecated family that counts what `own` counts
// (docs/support.md, Deprecation).
std::string Deprecated(std::string_view own) {
  return "DEPRECATED: use " + std::string(own) +
         " (the same count); --controller-runtime-metrics=false drops it. ";
}
}  // namespace

void Metrics::RenderOwn(std::string* out, const Snapshot& s, const QueueStats& q,
                        const GatedPods& g, std::int64_t now_unix) const {
  AppendHeader(out, Own("reconciles_total"), "counter", "Reconciles of Deployments by result.");
  AppendSample(out, Own("reconciles_total"), "result=\"success\"", static_cast<double>(s.ok));
  AppendSample(out, Own("reconciles_total"), "result=\"error\"", static_cast<double>(s.error));
  AppendHeader(out, Own("errors_total"), "counter", "Reconciles that failed and were retried.");
  AppendSample(out, Own("errors_total"), "", static_cast<double>(s.error));
  AppendHeader(out, Own("writes_total"), "counter", "API writes by plan action.");
  for (const auto& [action, count] : s.writes) {
    std::string labels = "action=\"";
    metrics::AppendLabelValue(&labels, action);
    AppendSample(out, Own("writes_total"), labels + "\"", static_cast<double>(count));
  }
  AppendHeader(out, Own("api_requests_total"), "counter",
               "API requests made by the reconcile loop and leader election, by verb and HTTP "
               "code (0: no answer).");
  for (const auto& [key, count] : s.api_requests) {
    AppendSample(out, Own("api_requests_total"),
                 "verb=\"" + key.first + "\",code=\"" + std::to_string(key.second) + "\"",
                 static_cast<double>(count));
  }
  AppendHeader(out, Own("queue_depth"), "gauge", "Deployment keys waiting to be reconciled.");
  AppendSample(out, Own("queue_depth"), "", static_cast<double>(q.depth));
  AppendHeader(out, Own("queue_latency_seconds"), "histogram", "Time a key waited in the queue.");
  queue_latency_.Render(out, Own("queue_latency_seconds"), "", s.queue_latency);
  AppendHeader(out, Own("reconcile_duration_seconds"), "histogram", "Time one reconcile took.");
  reconcile_duration_.Render(out, Own("reconcile_duration_seconds"), "", s.reconcile_duration);
  AppendHeader(out, Own("leader"), "gauge", "1 while this replica holds the Lease.");
  AppendSample(out, Own("leader"), "", s.leader ? 1 : 0);
  AppendHeader(out, Own("scheduling_api_served"), "gauge",
               "1 while the group APIs of every allowed backend are served (native: "
               "scheduling.k8s.io workloads and podgroups, v1 or v1beta1).");
  AppendSample(out, Own("scheduling_api_served"), "", s.api_served ? 1 : 0);
  AppendHeader(out, Own("scheduling_api_version"), "gauge",
               "1 for the scheduling.k8s.io version wasd reads and writes Workloads and "
               "PodGroups through (found by discovery, v1 preferred), 0 for the others.");
  for (const std::string_view v : kSchedulingVersions) {
    AppendSample(out, Own("scheduling_api_version"), "version=\"" + std::string(v) + "\"",
                 v == s.scheduling_version ? 1 : 0);
  }
  AppendHeader(out, Own("gated_pods"), "gauge",
               "Pods of opted-in Deployments held by the wasd.io/pod-group scheduling gate.");
  AppendSample(out, Own("gated_pods"), "", static_cast<double>(g.count));
  AppendHeader(out, Own("oldest_gated_pod_age_seconds"), "gauge",
               "Age of the oldest pod held by the wasd.io/pod-group gate; 0 when none is.");
  const double age = g.oldest_created_unix && now_unix > *g.oldest_created_unix
                         ? static_cast<double>(now_unix - *g.oldest_created_unix)
                         : 0;
  AppendSample(out, Own("oldest_gated_pod_age_seconds"), "", age);
}

void Metrics::RenderControllerRuntime(std::string* out, const Snapshot& s,
                                      const QueueStats& q) const {
  const std::string c = ControllerLabel();
  const std::string wq = QueueLabels();
  // The six that count what a wasd_reconciler_* family counts: deprecated,
  // dropped with --controller-runtime-metrics=false.
  const bool duplicates = controller_runtime_names_;
  if (duplicates) {
    AppendHeader(out, "controller_runtime_reconcile_total", "counter",
                 Deprecated("wasd_reconciler_reconciles_total") +
                     "Reconciles finished, by outcome (controller-runtime's name).");
    AppendSample(out, "controller_runtime_reconcile_total", c + ",result=\"success\"",
                 static_cast<double>(s.ok - s.requeue_after));
    AppendSample(out, "controller_runtime_reconcile_total", c + ",result=\"error\"",
                 static_cast<double>(s.error));
    // wasd never asks for an immediate requeue without a delay.
    AppendSample(out, "controller_runtime_reconcile_total", c + ",result=\"requeue\"", 0);
    AppendSample(out, "controller_runtime_reconcile_total", c + ",result=\"requeue_after\"",
                 static_cast<double>(s.requeue_after));
    AppendHeader(out, "controller_runtime_reconcile_errors_total", "counter",
                 Deprecated("wasd_reconciler_errors_total") +
                     "Reconciles that returned an error (controller-runtime's name).");
    AppendSample(out, "controller_runtime_reconcile_errors_total", c, static_cast<double>(s.error));
    AppendHeader(out, "controller_runtime_reconcile_time_seconds", "histogram",
                 Deprecated("wasd_reconciler_reconcile_duration_seconds") +
                     "Duration of one reconcile (controller-runtime's name).");
    reconcile_duration_.Render(out, "controller_runtime_reconcile_time_seconds", c,
                               s.reconcile_duration);
  }
  AppendHeader(out, "controller_runtime_max_concurrent_reconciles", "gauge",
               "Reconcile workers started (--workers).");
  AppendSample(out, "controller_runtime_max_concurrent_reconciles", c, s.workers);
  AppendHeader(out, "controller_runtime_active_workers", "gauge",
               "Workers busy with a reconcile right now.");
  AppendSample(out, "controller_runtime_active_workers", c, s.active);

  if (duplicates) {
    AppendHeader(out, "workqueue_depth", "gauge",
                 Deprecated("wasd_reconciler_queue_depth") +
                     "Deployment keys ready and waiting for a worker.");
    AppendSample(out, "workqueue_depth", wq, static_cast<double>(q.depth));
  }
  AppendHeader(out, "workqueue_adds_total", "counter",
               "Keys put in the queue (an add merged with a waiting duplicate is not counted).");
  AppendSample(out, "workqueue_adds_total", wq, static_cast<double>(q.adds));
  AppendHeader(out, "workqueue_retries_total", "counter",
               "Keys put back with backoff after a failed reconcile.");
  AppendSample(out, "workqueue_retries_total", wq, static_cast<double>(q.retries));
  if (duplicates) {
    AppendHeader(out, "workqueue_queue_duration_seconds", "histogram",
                 Deprecated("wasd_reconciler_queue_latency_seconds") +
                     "Time from a key becoming ready to a worker taking it.");
    queue_latency_.Render(out, "workqueue_queue_duration_seconds", wq, s.queue_latency);
  }
  AppendHeader(out, "workqueue_work_duration_seconds", "histogram",
               "Time a worker spent on one key.");
  reconcile_duration_.Render(out, "workqueue_work_duration_seconds", wq, s.reconcile_duration);
  AppendHeader(out, "workqueue_unfinished_work_seconds", "gauge",
               "Seconds spent so far on keys still being processed, summed over workers.");
  AppendSample(out, "workqueue_unfinished_work_seconds", wq, s.unfinished);
  AppendHeader(out, "workqueue_longest_running_processor_seconds", "gauge",
               "Seconds the longest-running current reconcile has taken so far.");
  AppendSample(out, "workqueue_longest_running_processor_seconds", wq, s.longest);

  if (duplicates) {
    AppendHeader(out, "leader_election_master_status", "gauge",
                 Deprecated("wasd_reconciler_leader") +
                     "1 while this replica holds the named Lease, else 0.");
    AppendSample(out, "leader_election_master_status", "name=\"" + std::string(kLeaseName) + "\"",
                 s.leader ? 1 : 0);
  }
}

}  // namespace wasd::reconciler
