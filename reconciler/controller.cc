#include "reconciler/controller.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "base/http_server.h"
#include "kube/client.h"
#include "reconciler/api.h"
#include "reconciler/caches.h"
#include "reconciler/events.h"
#include "reconciler/executor.h"
#include "reconciler/gang_status.h"
#include "reconciler/kube_api.h"
#include "reconciler/leader_elector.h"
#include "reconciler/metrics.h"
#include "reconciler/plan_rounds.h"
#include "reconciler/recent_writes.h"
#include "reconciler/work_queue.h"
#include "workloadbuilder/json_util.h"

namespace wasd::reconciler {

using planner::IsTerminating;
using planner::kReasonApiNotServed;
using planner::PlanInput;
using planner::SplitKey;
using workloadbuilder::Backend;

// A Deployment whose pod template names a backend this reconciler does not
// serve (--allowed-backends changed after it was admitted).
constexpr std::string_view kReasonBackendNotAllowed = "BackendNotAllowed";

std::vector<Backend> AllowedBackends(const workloadbuilder::BackendSettings& settings) {
  std::vector<Backend> out;
  for (const Backend b : workloadbuilder::kAllBackends) {
    if (settings.allowed.empty() ? b == settings.backend : settings.Allows(b)) out.push_back(b);
  }
  return out;
}

std::string WhatToInstall(Backend backend) {
  switch (backend) {
    case Backend::kNative:
      return "turn on the GenericWorkload feature gate and the scheduling.k8s.io API on "
             "kube-apiserver (v1 where it is GA, Kubernetes 1.38 and later; on 1.37 "
             "--runtime-config=scheduling.k8s.io/v1beta1=true)";
    case Backend::kVolcano: return "install Volcano (CRD podgroups.scheduling.volcano.sh, v1beta1)";
    case Backend::kKai:
      return "install NVIDIA KAI-Scheduler (CRD podgroups.scheduling.run.ai, v2alpha2)";
    case Backend::kCoscheduling:
      return "install scheduler-plugins with the coscheduling plugin (CRD "
             "podgroups.scheduling.x-k8s.io, v1alpha1)";
  }
  return "";
}

namespace {

// "scheduling.k8s.io workloads and podgroups", "scheduling.volcano.sh/v1beta1 podgroups".
std::string ApiWords(Backend backend) {
  if (backend == Backend::kNative) return "scheduling.k8s.io workloads and podgroups";
  return workloadbuilder::GroupVersion(backend) + " " +
         std::string(workloadbuilder::Info(backend).resource);
}

std::size_t Index(Backend backend) { return static_cast<std::size_t>(backend); }

// Q22: a Deployment whose stored object keeps spec.scheduling is managed by
// the in-tree Deployment controller (kube-apiserver drops the field where
// the WorkloadWithDeployment gate is off). wasd's carrier is the annotation
// alone.
bool InTreeManaged(const nlohmann::json& deployment) {
  return workloadbuilder::MemberPath(deployment, {"spec", "scheduling"}) != nullptr;
}

// Sleeps until `d` passed or `stop`; false when stopped.
bool SleepFor(std::chrono::milliseconds d, const std::stop_token& stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  return !cv.wait_for(lock, stop, d, [] { return false; }) && !stop.stop_requested();
}

class Controller {
 public:
  Controller(const ControllerOptions& options, const base::Logger& log)
      : options_(options),
        log_(log),
        client_(options.kube),
        api_(client_, metrics_),
        allowed_(AllowedBackends(options.backends)),
        caches_(
            client_, options.resync, recent_, [this](const std::string& key) { Enqueue(key); },
            allowed_),
        events_(api_, log_, options.election.identity),
        executor_(api_, recent_, events_, metrics_, log_, [this] { return MayWrite(); }) {
    metrics_.SetQueueStatsSource([this] {
      return QueueStats{queue_.Len(), queue_.adds(), queue_.retries()};
    });
    metrics_.SetGatedPodsSource([this] { return caches_.CountGatedPods(); });
    if (options.gang_status) {
      caches_.EnableGangStatus();
      gang_ = std::make_unique<GangStatus>(api_, events_, log_, options_.backends.facts,
                                           options.gang_status_delay);
      metrics_.SetExtraSource([this](std::string* out) { gang_->Render(out); });
    }
  }

  int Run(const std::stop_token& stop);

 private:
  // Every queueing that is not the reconcile's own requeue: the key's plan
  // may have moved (PlanMarks; kept only for the gang doctor's rechecks, the
  // one reconcile that no change asks for).
  void Enqueue(const std::string& key) {
    if (gang_) marks_.Changed(key);
    queue_.Add(key);
  }
  bool MayWrite() const { return !options_.leader_elect || (elector_ && elector_->is_leader()); }
  // Q13: nothing is planned or written before every cache the plan reads has
  // delivered its first list and the first scheduling-API check is done (a
  // plan from a half-filled cache deletes the PodGroups of running gangs and
  // posts objects that exist).
  bool Synced() const { return caches_.CoreSynced() && api_checked_; }
  bool Ready() const { return !stopping_ && Synced(); }
  // Blocks until Synced() or `stop`; false when stopped.
  bool WaitForSync(const std::stop_token& stop);
  base::HttpResponse Handle(boost::beast::http::verb method, std::string_view target);
  void OnLeadership(bool leading);
  void ApiCheckLoop(const std::stop_token& stop);
  // One check of `backend`'s API (native: discovery of the scheduling.k8s.io
  // version); true while it is served but its caches are still syncing.
  // `reported`: the outage was logged.
  bool CheckBackend(Backend backend, bool& reported);
  void CheckNative(bool& reported, bool& syncing);
  base::Status CheckBackendApi(Backend backend);
  // `backend`'s API answered 404 (or discovery found no version).
  void NotServed(Backend backend, const base::Status& why, bool& reported);
  // The API of `backend` is served: once its caches synced, reconcile.
  bool MarkServedWhenSynced(Backend backend);
  // Wakes the API check at once (a 404 from a write of the group API).
  void RecheckApiSoon();
  bool Allowed(Backend backend) const;
  bool Served(Backend backend) const { return served_[Index(backend)]; }
  SchedulingApi Scheduling() const {
    std::lock_guard<std::mutex> lock(scheduling_mu_);
    return scheduling_;
  }
  // Logged once per Deployment managed by the in-tree controller.
  void StandDown(const std::string& key);
  // The Warning Event for a Deployment of a backend that cannot be used now.
  void ReportUnusable(const nlohmann::json& deployment, Backend backend);
  void Worker();
  ReconcileResult Reconcile(const std::string& key);
  // The gang doctor after a reconcile (--gang-status); a failed write makes
  // `result` an error so the key is retried. `marks`: GangStatus::Update's.
  void PublishGangStatus(const PlanInput& observed, const std::string& ns, const std::string& name,
                         bool api_served, ReconcileResult& result,
                         std::optional<std::uint64_t> marks = std::nullopt);
  // Folds what the gang doctor did into `result` (its error, its recheck).
  static void ApplyGangUpdate(GangUpdate u, ReconcileResult& result);

  const ControllerOptions& options_;
  const base::Logger& log_;
  kube::Client client_;
  Metrics metrics_;
  KubeApi api_;
  RecentWrites recent_;
  WorkQueue queue_;
  PlanMarks marks_;  // before caches_, whose handlers call Enqueue
  const std::vector<Backend> allowed_;
  Caches caches_;
  EventRecorder events_;
  Executor executor_;
  std::unique_ptr<GangStatus> gang_;  // --gang-status only
  std::unique_ptr<LeaderElector> elector_;
  // By backend: set only once its API is served and its caches synced.
  std::array<std::atomic<bool>, workloadbuilder::kAllBackends.size()> served_{};
  // Served, but its group caches are still syncing: its Deployments wait
  // (requeued), with no APINotServed Event.
  std::array<std::atomic<bool>, workloadbuilder::kAllBackends.size()> syncing_{};
  std::atomic<bool> api_checked_{false};  // the first check of every allowed backend ended
  // The scheduling.k8s.io version in use (discovery); empty until found.
  mutable std::mutex scheduling_mu_;
  SchedulingApi scheduling_;  // guarded by scheduling_mu_
  // ApiCheckLoop's wake-up (RecheckApiSoon).
  std::mutex wake_mu_;
  std::condition_variable_any wake_cv_;
  bool wake_ = false;  // guarded by wake_mu_
  std::mutex stand_down_mu_;
  std::set<std::string> stood_down_;  // guarded by stand_down_mu_
  std::atomic<bool> stopping_{false};
};

base::HttpResponse Controller::Handle(boost::beast::http::verb method, std::string_view target) {
  auto reply = [](int status, std::string body) {
    base::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  };
  if (method != boost::beast::http::verb::get && method != boost::beast::http::verb::head) {
    base::HttpResponse r = reply(405, "method not allowed\n");
    r.allow = "GET, HEAD";
    return r;
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/healthz" || path == "/livez") return reply(200, "ok\n");
  if (path == "/readyz") {
    if (Ready()) return reply(200, "ok\n");
    return reply(503, stopping_ ? "stopping\n" : "caches not synced\n");
  }
  if (path == "/metrics") {
    base::HttpResponse r = reply(200, metrics_.Render());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  return reply(404, "not found\n");
}

void Controller::OnLeadership(bool leading) {
  metrics_.SetLeader(leading);
  if (!leading) return;
  // A new leader has not been reconciling: look at everything once.
  for (const std::string& key : caches_.DeploymentKeys()) Enqueue(key);
}

bool Controller::Allowed(Backend backend) const {
  return std::find(allowed_.begin(), allowed_.end(), backend) != allowed_.end();
}

base::Status Controller::CheckBackendApi(Backend backend) {
  const std::vector<kube::Resource> resources =
      backend == Backend::kNative ? std::vector<kube::Resource>{Workloads(), PodGroups()}
                                  : std::vector<kube::Resource>{GroupResource(backend)};
  for (const kube::Resource& r : resources) {
    base::Result<kube::ListResult> listed = api_.ListPage(r, "", 1);
    if (!listed.ok()) return listed.status();
  }
  return base::Status::Ok();
}

void Controller::RecheckApiSoon() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wake_ = true;
  }
  wake_cv_.notify_all();
}

void Controller::NotServed(Backend b, const base::Status& why, bool& reported) {
  const bool was_served = served_[Index(b)].exchange(false);
  syncing_[Index(b)] = false;
  if (was_served) {
    log_.Error(ApiWords(b) +
                   " is no longer served; wasd creates no group objects and lifts no gates for "
                   "Deployments of this backend until it is again: " +
                   WhatToInstall(b),
               {{"backend", workloadbuilder::BackendName(b)}, {"error", why.ToString()}});
    reported = true;
    for (const std::string& key : caches_.DeploymentKeys()) Enqueue(key);  // APINotServed
    return;
  }
  if (!reported) {
    log_.Error(ApiWords(b) +
                   " not served; wasd creates no group objects and lifts no gates "
                   "for Deployments of this backend until it is: " +
                   WhatToInstall(b) + " (re-checking every " +
                   std::to_string(options_.api_check_interval.count() / 1000) + " s)",
               {{"backend", workloadbuilder::BackendName(b)}, {"error", why.ToString()}});
    reported = true;
    for (const std::string& key : caches_.DeploymentKeys()) Enqueue(key);
  }
}

bool Controller::MarkServedWhenSynced(Backend b) {
  if (Served(b)) return false;
  if (!caches_.GroupsSynced(b)) {
    syncing_[Index(b)] = true;
    return true;
  }
  syncing_[Index(b)] = false;
  served_[Index(b)] = true;  // only now: a plan needs the group caches
  log_.Info(ApiWords(b) + " served and cached; reconciling its Deployments",
            {{"backend", workloadbuilder::BackendName(b)}});
  for (const std::string& key : caches_.DeploymentKeys()) Enqueue(key);
  return false;
}

void Controller::CheckNative(bool& reported, bool& syncing) {
  const SchedulingDiscovery d =
      DiscoverSchedulingApi([this](std::string_view gv) { return api_.GetGroupVersion(gv); });
  if (!d.ok()) {
    // Not an answer about the API: keep what is known and ask again.
    log_.Warn("cannot discover the scheduling.k8s.io versions; keeping the current one",
              {{"error", d.error.ToString()}, {"current", Scheduling().version}});
    syncing = syncing_[Index(Backend::kNative)];
    return;
  }
  if (!d.api.served()) {
    NotServed(Backend::kNative,
              base::Status::Http(404, "NotFound",
                                 "neither scheduling.k8s.io/v1 nor v1beta1 lists workloads and "
                                 "podgroups"),
              reported);
    return;
  }
  const SchedulingApi before = Scheduling();
  if (d.api != before) {
    {
      std::lock_guard<std::mutex> lock(scheduling_mu_);
      scheduling_ = d.api;  // writes go through it from now on
    }
    metrics_.SetSchedulingApiVersion(d.api.version);
    log_.Info("using " + d.api.GroupVersion() + " for Workloads and PodGroups",
              {{"served", DescribeDiscovery(d)},
               {"previous", before.served() ? before.version : std::string("none")}});
    if (caches_.UseSchedulingApi(d.api)) {
      log_.Info("Workload and PodGroup watches moved to " + d.api.GroupVersion() +
                    " (a relist; the cached objects are kept: they are the same objects)",
                {{"previous", before.version}});
      for (const std::string& key : caches_.DeploymentKeys()) Enqueue(key);
    }
  }
  reported = false;
  syncing = MarkServedWhenSynced(Backend::kNative);
}

bool Controller::CheckBackend(Backend b, bool& reported) {
  if (b == Backend::kNative) {
    bool syncing = false;
    CheckNative(reported, syncing);
    return syncing;
  }
  const base::Status s = CheckBackendApi(b);
  if (s.ok()) {
    reported = false;
    caches_.StartGroups(b);
    return MarkServedWhenSynced(b);
  }
  if (s.not_found()) {
    NotServed(b, s, reported);
    return false;
  }
  // No answer (or 403, 5xx): nothing learnt about the API; keep the state.
  if (!reported) {
    log_.Warn("cannot check " + ApiWords(b) + "; re-checking",
              {{"backend", workloadbuilder::BackendName(b)}, {"error", s.ToString()}});
  }
  return syncing_[Index(b)];
}

// Every allowed backend's API is checked every api_check_interval, served or
// not (a CRD removed, or a scheduling.k8s.io version switched by an upgrade,
// is noticed without a restart), and at once after a write got a 404. Each
// backend on its own: one whose caches never sync holds only its own
// Deployments (they wait), never the others or readiness.
void Controller::ApiCheckLoop(const std::stop_token& stop) {
  std::array<bool, workloadbuilder::kAllBackends.size()> reported{};
  while (!stop.stop_requested()) {
    bool syncing = false;
    for (const Backend b : allowed_) {
      syncing = CheckBackend(b, reported[Index(b)]) || syncing;
      if (stop.stop_requested()) return;
    }
    api_checked_ = true;
    bool all_served = true;
    for (const Backend b : allowed_) all_served = all_served && Served(b);
    metrics_.SetSchedulingApiServed(all_served);
    // While caches sync, look again soon (they usually take a moment).
    const std::chrono::milliseconds wait =
        syncing ? std::min(options_.api_check_interval, std::chrono::milliseconds(100))
                : options_.api_check_interval;
    std::unique_lock lock(wake_mu_);
    wake_cv_.wait_for(lock, stop, wait, [this] { return wake_; });
    wake_ = false;
  }
}

void Controller::ReportUnusable(const nlohmann::json& deployment, Backend backend) {
  const std::string name(workloadbuilder::BackendName(backend));
  if (!Allowed(backend)) {
    std::string allowed;
    for (const Backend b : allowed_) {
      allowed += (allowed.empty() ? "" : ", ") + std::string(workloadbuilder::BackendName(b));
    }
    events_.Record(deployment, "Warning", kReasonBackendNotAllowed,
                   "The pod template names backend " + name +
                       ", which this reconciler does not serve (--allowed-backends: " + allowed +
                       "); wasd creates no group objects for this Deployment and its pods stay "
                       "gated");
    return;
  }
  if (backend == Backend::kNative) {
    events_.Record(deployment, "Warning", kReasonApiNotServed,
                   "scheduling.k8s.io Workloads and PodGroups are not served by this cluster "
                   "(neither v1 nor v1beta1); wasd creates no Workload or PodGroups for this "
                   "Deployment and its pods stay gated until the API is served (" +
                       WhatToInstall(backend) + ")");
    return;
  }
  events_.Record(deployment, "Warning", kReasonApiNotServed,
                 ApiWords(backend) + " (backend " + name +
                     ") is not served by this cluster; wasd creates no PodGroup for this "
                     "Deployment and its pods stay gated until it is: " +
                     WhatToInstall(backend));
}

bool Controller::WaitForSync(const std::stop_token& stop) {
  bool logged = false;
  while (!Synced()) {
    if (!logged) {
      log_.Info("waiting for the caches to sync before reconciling");
      logged = true;
    }
    if (!SleepFor(std::chrono::milliseconds(50), stop)) return false;
  }
  std::string served;
  for (const Backend b : allowed_) {
    if (Served(b))
      served += (served.empty() ? "" : ",") + std::string(workloadbuilder::BackendName(b));
  }
  log_.Info("caches synced; reconciling", {{"servedBackends", served}});
  return true;
}

ReconcileResult Controller::Reconcile(const std::string& key) {
  ReconcileResult result;
  std::string ns;
  std::string name;
  if (!SplitKey(key, &ns, &name) || !MayWrite()) return result;
  if (!Synced()) {  // a key queued before sync (workers start after it; belt and braces)
    result.requeue_after = std::chrono::milliseconds(1000);
    return result;
  }
  // Q22: the in-tree controller's Deployment; wasd writes nothing for it.
  if (const planner::Object d = caches_.Deployment(ns, name); d != nullptr && InTreeManaged(*d)) {
    StandDown(key);
    if (gang_) gang_->Forget(ns, name);
    marks_.Forget(key);
    return result;
  }
  // Before the caches are read: a change after this point plans again.
  const PlanMarks::Ticket ticket = gang_ ? marks_.Begin(key) : PlanMarks::Ticket{};
  // The gang doctor's recheck, with nothing changed since the clean plan
  // whose inputs gave the verdict it holds: only that verdict, published
  // (GangStatus::Recheck) — the Deployment is all it reads.
  if (gang_ && ticket.current) {
    // Null (the full path below) when gone or of a backend not usable now.
    const auto usable = [&]() -> planner::Object {
      planner::Object d = caches_.Deployment(ns, name);
      const std::optional<Backend> b = d != nullptr ? planner::BackendOf(*d) : std::nullopt;
      return b && !(Allowed(*b) && Served(*b)) ? nullptr : d;
    };
    if (std::optional<GangUpdate> u = gang_->Recheck(usable, ns, name, ticket.changes)) {
      ApplyGangUpdate(std::move(*u), result);
      return result;
    }
  }
  std::optional<PlanInput> first = caches_.Assemble(ns, name);
  if (first->deployment == nullptr) {
    if (gang_) gang_->Forget(ns, name);
    marks_.Forget(key);
    return result;
  }
  // A label that names no backend is the planner's to report.
  const std::optional<Backend> backend = planner::BackendOf(*first->deployment);
  if (backend && Allowed(*backend) && !Served(*backend) && syncing_[Index(*backend)]) {
    // Served, its group caches not filled yet: no plan and no Event (Q13).
    result.requeue_after = std::chrono::milliseconds(1000);
    return result;
  }
  if (backend && !(Allowed(*backend) && Served(*backend))) {
    first->scheduling_api_version = "";  // none in use: the doctor names the table's
    if (!IsTerminating(*first->deployment)) ReportUnusable(*first->deployment, *backend);
    if (Allowed(*backend)) PublishGangStatus(*first, ns, name, false, result);
    return result;
  }
  // The gang doctor's recheck, with nothing changed since a clean plan:
  // only the diagnosis (PlanMarks), held for a further recheck.
  if (ticket.current) {
    first->facts = options_.backends.facts;
    first->scheduling_api_version = Scheduling().GroupVersion();
    PublishGangStatus(*first, ns, name, true, result, ticket.changes);
    return result;
  }
  PlanInput last;
  // One version for the whole reconcile: what the plan builds and where the
  // executor writes agree even if discovery switches meanwhile.
  const SchedulingApi scheduling = Scheduling();
  auto observe = [&] {
    PlanInput in;
    if (first) {
      in = std::move(*first);
      first.reset();
    } else {
      in = caches_.Assemble(ns, name);
    }
    in.facts = options_.backends.facts;
    in.scheduling_api_version = scheduling.GroupVersion();
    if (gang_) last = in;  // shared pointers: the gang doctor reads what the plan read
    return in;
  };
  const std::uint64_t writes_before = metrics_.writes();
  result = RunPlanRounds(key, observe, api_, executor_, log_, scheduling);
  // A create answered 404: the group API may be gone or served under another
  // version; the API check looks now rather than at its next interval.
  if (result.status.not_found()) RecheckApiSoon();
  if (gang_) marks_.Planned(key, ticket, result.status.ok() && !result.requeue_after);
  // The plan wrote (a PodGroup created, gates lifted): what it read is out
  // of date. With settling on, the gang doctor looks when the settle time
  // ends (GangStatus::Defer); without, read again, with the writes on top
  // (RecentWrites), so the condition says what is now true.
  if (gang_ && metrics_.writes() != writes_before) {
    if (const std::optional<std::chrono::milliseconds> later = gang_->Defer(ns, name)) {
      if (result.status.ok() && (!result.requeue_after || *later < *result.requeue_after)) {
        result.requeue_after = later;
      }
      return result;
    }
    last = caches_.Assemble(ns, name);
    last.scheduling_api_version = scheduling.GroupVersion();
  }
  // Also after a failed write: a group object the API server refuses to
  // create is exactly what the doctor's PodGroupMissing is for. A clean
  // plan that wrote nothing read exactly the ticket's changes: its verdict
  // may be held until the settle time ends.
  const bool exact =
      metrics_.writes() == writes_before && result.status.ok() && !result.requeue_after;
  PublishGangStatus(last, ns, name, true, result,
                    exact ? std::optional<std::uint64_t>(ticket.changes) : std::nullopt);
  return result;
}

void Controller::StandDown(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(stand_down_mu_);
    if (!stood_down_.insert(key).second) return;
  }
  log_.Info(
      "Deployment carries spec.scheduling: the in-tree Deployment controller manages its "
      "Workload and PodGroups; wasd creates, gates and patches nothing for it",
      {{"deployment", key}});
}

void Controller::PublishGangStatus(const PlanInput& observed, const std::string& ns,
                                   const std::string& name, bool api_served,
                                   ReconcileResult& result, std::optional<std::uint64_t> marks) {
  if (!gang_ || !MayWrite() || observed.deployment == nullptr) return;
  ApplyGangUpdate(
      gang_->Update(
          observed, ns, name, api_served,
          [this](std::vector<planner::Object>* nodes, std::vector<planner::Object>* bound_pods) {
            return caches_.FitInputs(nodes, bound_pods);
          },
          marks),
      result);
}

void Controller::ApplyGangUpdate(GangUpdate u, ReconcileResult& result) {
  if (!u.status.ok()) {
    if (result.status.ok()) result.status = std::move(u.status);  // the first error is retried
    return;
  }
  // Settling or waiting for the fit preview: come back when it is due (the
  // sooner of that and the plan's own requeue).
  if (u.recheck && (!result.requeue_after || *u.recheck < *result.requeue_after)) {
    result.requeue_after = u.recheck;
  }
}

void Controller::Worker() {
  std::string key;
  std::chrono::nanoseconds waited{};
  while (queue_.Get(&key, &waited)) {
    metrics_.ObserveQueueLatency(waited);
    const auto start = metrics_.ReconcileStarted();
    ReconcileResult r;
    try {
      r = Reconcile(key);
    } catch (const std::exception& e) {
      r.status = base::Status::Error(base::Status::Kind::kBadResponse, e.what());
    }
    Metrics::Outcome outcome = Metrics::Outcome::kSuccess;
    if (!r.status.ok()) {
      outcome = Metrics::Outcome::kError;
    } else if (r.requeue_after) {
      outcome = Metrics::Outcome::kRequeueAfter;
    }
    metrics_.ReconcileFinished(start, outcome);
    if (!r.status.ok()) {
      log_.Warn("reconcile failed; retrying with backoff", {{"deployment", key},
                                                            {"error", r.status.ToString()},
                                                            {"retries", queue_.NumRequeues(key)}});
      queue_.AddRateLimited(key);
    } else {
      queue_.Forget(key);
      if (r.requeue_after) queue_.AddAfter(key, *r.requeue_after);
    }
    queue_.Done(key);
  }
}

int Controller::Run(const std::stop_token& stop) {
  base::HttpServerThread probes;
  base::HttpServerThread metrics;
  const base::HttpHandler handler = [this](boost::beast::http::verb method,
                                           std::string_view target) {
    return Handle(method, target);
  };
  const base::ListenAddress& probe_at = options_.probe_address;
  const base::ListenAddress& metrics_at = options_.metrics_address;
  const bool same = probe_at.enabled && metrics_at.enabled && probe_at.host == metrics_at.host &&
                    probe_at.port == metrics_at.port && probe_at.port != 0;
  if (probe_at.enabled) {
    if (base::Status s = probes.Start(probe_at, same ? "probes+metrics" : "probes", handler, log_);
        !s.ok()) {
      log_.Error("cannot serve probes", {{"error", s.message()}});
      return 1;
    }
    log_.Info("serving probes", {{"address", probe_at.host}, {"port", probes.port()}});
  }
  if (metrics_at.enabled && !same) {
    if (base::Status s = metrics.Start(metrics_at, "metrics", handler, log_); !s.ok()) {
      log_.Error("cannot serve metrics", {{"error", s.message()}});
      return 1;
    }
    log_.Info("serving metrics", {{"address", metrics_at.host}, {"port", metrics.port()}});
  }

  caches_.StartCore();
  std::jthread api_check([this](const std::stop_token& s) { ApiCheckLoop(s); });
  if (options_.leader_elect) {
    elector_ = std::make_unique<LeaderElector>(api_, log_, options_.election,
                                               [this](bool leading) { OnLeadership(leading); });
    elector_->Start();
  } else {
    metrics_.SetLeader(true);
  }
  metrics_.SetWorkers(std::max(1, options_.workers));
  log_.Info("reconciler started", {{"identity", options_.election.identity},
                                   {"leaderElect", options_.leader_elect},
                                   {"workers", options_.workers}});
  std::vector<std::thread> workers;
  if (WaitForSync(stop)) {
    for (int i = 0; i < std::max(1, options_.workers); ++i)
      workers.emplace_back([this] { Worker(); });
    while (SleepFor(std::chrono::seconds(1), stop)) {
    }
  }

  log_.Info("stopping");
  stopping_ = true;
  queue_.ShutDown();
  api_check.request_stop();
  // Workers first: a write still in flight must land before the Lease is
  // released, or it could land after a successor started.
  for (std::thread& w : workers) w.join();
  if (elector_) elector_->Stop();  // releases the Lease
  api_check = std::jthread();
  caches_.Stop();
  probes.Stop();
  metrics.Stop();
  log_.Info("stopped");
  return 0;
}

}  // namespace

int RunController(const ControllerOptions& options, const std::stop_token& stop,
                  const base::Logger& log) {
  Controller controller(options, log);
  return controller.Run(stop);
}

}  // namespace wasd::reconciler
