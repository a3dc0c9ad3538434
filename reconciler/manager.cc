// Manager (see manager.h).
#include "reconciler/manager.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace wasd::reconciler {

using workloadbuilder::Backend;

namespace {

std::size_t Index(Backend backend) { return static_cast<std::size_t>(backend); }

// Sleeps until `d` passed or `stop`; false when stopped.
bool SleepFor(std::chrono::milliseconds d, const std::stop_token& stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  return !cv.wait_for(lock, stop, d, [] { return false; }) && !stop.stop_requested();
}

}  // namespace

Manager::Manager(const ControllerOptions& options, const runtime::Logger& log)
    : options_(options),
      log_(log),
      client_(options.kube),
      api_(client_, metrics_),
      allowed_(AllowedBackends(options.backends)),
      caches_(
          client_, options.resync, recent_, [this](const std::string& key) { Enqueue(key); },
          allowed_),
      events_(api_, log_, options.election.identity, options.normal_events) {
  metrics_.SetGatedPodsSource([this] { return caches_.CountGatedPods(); });
  metrics_.SetControllerRuntimeNames(options.controller_runtime_metrics);
}

Manager::~Manager() {
  for (Loop& l : loops_) l.loop->Stop();
}

void Manager::Add(Reconciler& reconciler, int workers, std::chrono::milliseconds enqueue_delay,
                  bool count_metrics) {
  Loop l;
  l.loop = std::make_unique<WorkerLoop>(reconciler, log_, count_metrics ? &metrics_ : nullptr,
                                        enqueue_delay);
  l.workers = std::max(1, workers);
  if (count_metrics) {
    WorkQueue* q = &l.loop->queue();
    metrics_.SetQueueStatsSource([q] { return QueueStats{q->Len(), q->adds(), q->retries()}; });
    metrics_.SetWorkers(l.workers);
  }
  loops_.push_back(std::move(l));
}

void Manager::Enqueue(const std::string& key) {
  for (Loop& l : loops_) l.loop->Enqueue(key);
}

void Manager::EnqueueAll() {
  for (const std::string& key : caches_.DeploymentKeys()) Enqueue(key);
}

bool Manager::Allowed(Backend backend) const {
  return std::find(allowed_.begin(), allowed_.end(), backend) != allowed_.end();
}

runtime::HttpResponse Manager::Handle(boost::beast::http::verb method, std::string_view target) {
  auto reply = [](int status, std::string body) {
    runtime::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  };
  if (method != boost::beast::http::verb::get && method != boost::beast::http::verb::head) {
    runtime::HttpResponse r = reply(405, "method not allowed\n");
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
    runtime::HttpResponse r = reply(200, metrics_.Render());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  return reply(404, "not found\n");
}

void Manager::OnLeadership(bool leading) {
  metrics_.SetLeader(leading);
  // A new leader has not been reconciling: look at everything once.
  if (leading) EnqueueAll();
}

base::Status Manager::CheckBackendApi(Backend backend) {
  const std::vector<kube::Resource> resources =
      backend == Backend::kNative ? std::vector<kube::Resource>{Workloads(), PodGroups()}
                                  : std::vector<kube::Resource>{GroupResource(backend)};
  for (const kube::Resource& r : resources) {
    base::Result<kube::ListResult> listed = api_.ListPage(r, "", 1);
    if (!listed.ok()) return listed.status();
  }
  return base::Status::Ok();
}

void Manager::RecheckApiSoon() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wake_ = true;
  }
  wake_cv_.notify_all();
}

void Manager::StandDown(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(stand_down_mu_);
    if (!stood_down_.insert(key).second) return;
  }
  log_.Info(
      "Deployment carries spec.scheduling: the in-tree Deployment controller manages its "
      "Workload and PodGroups; wasd creates, gates and patches nothing for it",
      {{"deployment", key}});
}

void Manager::NotServed(Backend b, const base::Status& why, bool& reported) {
  const bool was_served = served_[Index(b)].exchange(false);
  syncing_[Index(b)] = false;
  if (was_served) {
    log_.Error(ApiWords(b) +
                   " is no longer served; wasd creates no group objects for Deployments of this "
                   "backend until it is again, and their new pods wait as the Event "
                   "APINotServed of each says (gated, held by their scheduler, or held by "
                   "nothing): " +
                   WhatToInstall(b),
               {{"backend", workloadbuilder::BackendName(b)}, {"error", why.ToString()}});
    reported = true;
    EnqueueAll();  // APINotServed
    return;
  }
  if (!reported) {
    log_.Error(ApiWords(b) +
                   " not served; wasd creates no group objects for Deployments of this backend "
                   "until it is, and their new pods wait as the Event APINotServed of each "
                   "says (gated, held by their scheduler, or held by nothing): " +
                   WhatToInstall(b) + " (re-checking every " +
                   std::to_string(options_.api_check_interval.count() / 1000) + " s)",
               {{"backend", workloadbuilder::BackendName(b)}, {"error", why.ToString()}});
    reported = true;
    EnqueueAll();
  }
}

bool Manager::MarkServedWhenSynced(Backend b) {
  if (Served(b)) return false;
  if (!caches_.GroupsSynced(b)) {
    syncing_[Index(b)] = true;
    return true;
  }
  syncing_[Index(b)] = false;
  served_[Index(b)] = true;  // only now: a plan needs the group caches
  log_.Info(ApiWords(b) + " served and cached; reconciling its Deployments",
            {{"backend", workloadbuilder::BackendName(b)}});
  EnqueueAll();
  return false;
}

void Manager::CheckNative(bool& reported, bool& syncing) {
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
      EnqueueAll();
    }
  }
  reported = false;
  syncing = MarkServedWhenSynced(Backend::kNative);
}

bool Manager::CheckBackend(Backend b, bool& reported) {
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

// Each backend on its own: one whose caches never sync holds only its own
// Deployments (they wait), never the others or readiness.
void Manager::ApiCheckLoop(const std::stop_token& stop) {
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

bool Manager::WaitForSync(const std::stop_token& stop) {
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

int Manager::StartServers(runtime::HttpServerThread& probes, runtime::HttpServerThread& metrics) {
  const runtime::HttpHandler handler = [this](boost::beast::http::verb method,
                                              std::string_view target) {
    return Handle(method, target);
  };
  const runtime::ListenAddress& probe_at = options_.probe_address;
  const runtime::ListenAddress& metrics_at = options_.metrics_address;
  const runtime::HttpSecurity& security = options_.metrics_security;
  // An HTTPS /metrics never shares the plain probe port (cmd/ refuses it).
  const bool same = !security.secure() && probe_at.enabled && metrics_at.enabled &&
                    probe_at.host == metrics_at.host && probe_at.port == metrics_at.port &&
                    probe_at.port != 0;
  if (probe_at.enabled) {
    if (base::Status s = probes.Start(probe_at, same ? "probes+metrics" : "probes", handler, log_);
        !s.ok()) {
      log_.Error("cannot serve probes", {{"error", s.message()}});
      return 1;
    }
    log_.Info("serving probes", {{"address", probe_at.host}, {"port", probes.port()}});
  }
  if (metrics_at.enabled && !same) {
    if (base::Status s = metrics.Start(metrics_at, "metrics", handler, log_, {}, security);
        !s.ok()) {
      log_.Error("cannot serve metrics", {{"error", s.message()}});
      return 1;
    }
    log_.Info("serving metrics", {{"address", metrics_at.host},
                                  {"port", metrics.port()},
                                  {"scheme", security.secure() ? "https" : "http"}});
  }
  return 0;
}

int Manager::Run(const std::stop_token& stop) {
  runtime::HttpServerThread probes;
  runtime::HttpServerThread metrics;
  if (StartServers(probes, metrics) != 0) return 1;
  caches_.StartCore();
  std::jthread api_check([this](const std::stop_token& s) { ApiCheckLoop(s); });
  if (options_.leader_elect) {
    elector_ = std::make_unique<LeaderElector>(api_, log_, options_.election,
                                               [this](bool leading) { OnLeadership(leading); });
    elector_->Start();
  } else {
    metrics_.SetLeader(true);
  }
  log_.Info("reconciler started", {{"identity", options_.election.identity},
                                   {"leaderElect", options_.leader_elect},
                                   {"workers", options_.workers}});
  if (WaitForSync(stop)) {
    for (Loop& l : loops_) l.loop->Start(l.workers);
    while (SleepFor(std::chrono::seconds(1), stop)) {
    }
  }
  log_.Info("stopping");
  stopping_ = true;
  api_check.request_stop();
  // Workers first: a write still in flight must land before the Lease is
  // released, or it could land after a successor started.
  for (Loop& l : loops_) l.loop->Stop();
  if (elector_) elector_->Stop();  // releases the Lease
  api_check = std::jthread();
  caches_.Stop();
  probes.Stop();
  metrics.Stop();
  log_.Info("stopped");
  return 0;
}

}  // namespace wasd::reconciler
