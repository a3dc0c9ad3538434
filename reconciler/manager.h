// Manager: what the reconciler's controllers share, and their lifecycle —
// the API client, the informer caches, the Event recorder, leader election,
// the scheduling-API check, probes and metrics. Each controller is a
// Reconciler with its own WorkerLoop (its own queue); every key an informer
// event names goes to every loop.
//
// Lifecycle (Run): probes and metrics listen first; caches start; the
// scheduling API check runs for each allowed backend, each on its own (every
// api_check_interval, served or not — native: discovery of the
// scheduling.k8s.io version serving Workloads and PodGroups, v1 preferred;
// the others: their PodGroup CRD — a backend whose API is not served keeps
// the process up and healthy; the plan records one APINotServed Event per
// Deployment of that backend, whose pods stay gated: never a fall back to
// pod-by-pod scheduling); leader election starts; the loops start once every cache a
// reconcile reads has synced and the first API check ended (no plan from a
// half-filled cache), and reconcile keys only while this replica leads.
// Readiness follows the same sync. On stop: readiness off, loops closed and
// joined, then the Lease released, caches stopped.
//
// Thread-safe: the accessors from any thread once constructed; Add before Run.
#ifndef WASD_RECONCILER_MANAGER_H_
#define WASD_RECONCILER_MANAGER_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "kube/client.h"
#include "reconciler/api.h"
#include "reconciler/caches.h"
#include "reconciler/controller.h"
#include "reconciler/events.h"
#include "reconciler/kube_api.h"
#include "reconciler/leader_elector.h"
#include "reconciler/metrics.h"
#include "reconciler/recent_writes.h"
#include "reconciler/scheduling_api.h"
#include "reconciler/worker_loop.h"
#include "runtime/http_server.h"
#include "runtime/log.h"

namespace wasd::reconciler {

class Manager {
 public:
  Manager(const ControllerOptions& options, const runtime::Logger& log);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Adds a controller run by `workers` threads; keys from events wait
  // `enqueue_delay` (WorkerLoop). `count_metrics`: its reconciles are the
  // wasd_reconciler_* / controller_runtime_* ones (the plan's). Before Run.
  void Add(Reconciler& reconciler, int workers, std::chrono::milliseconds enqueue_delay,
           bool count_metrics);

  // Runs until `stop`. 0 after a clean stop, 1 when a listener could not open.
  int Run(const std::stop_token& stop);

  const ControllerOptions& options() const { return options_; }
  const runtime::Logger& log() const { return log_; }
  Api& api() { return api_; }
  Metrics& metrics() { return metrics_; }
  RecentWrites& recent() { return recent_; }
  Caches& caches() { return caches_; }
  EventRecorder& events() { return events_; }
  const std::vector<workloadbuilder::Backend>& allowed() const { return allowed_; }

  // This replica may write: it leads (or leader election is off).
  bool MayWrite() const { return !options_.leader_elect || (elector_ && elector_->is_leader()); }
  // Every cache a reconcile reads has delivered its first list and the first
  // scheduling-API check ended.
  bool Synced() const { return caches_.CoreSynced() && api_checked_; }
  bool Allowed(workloadbuilder::Backend backend) const;
  // The backend's API is served and its group caches synced.
  bool Served(workloadbuilder::Backend backend) const {
    return served_[static_cast<std::size_t>(backend)];
  }
  // Served, but its group caches are still syncing: its Deployments wait
  // (requeued), with no APINotServed Event.
  bool Syncing(workloadbuilder::Backend backend) const {
    return syncing_[static_cast<std::size_t>(backend)];
  }
  // The scheduling.k8s.io version in use (discovery); empty until found.
  SchedulingApi Scheduling() const {
    std::lock_guard<std::mutex> lock(scheduling_mu_);
    return scheduling_;
  }
  // Wakes the API check at once (a 404 from a write of the group API).
  void RecheckApiSoon();
  // Logs, once per Deployment, that the in-tree controller manages it (Q22).
  void StandDown(const std::string& key);

 private:
  struct Loop {
    std::unique_ptr<WorkerLoop> loop;
    int workers = 1;
  };
  // Every loop gets `key`.
  void Enqueue(const std::string& key);
  void EnqueueAll();
  bool Ready() const { return !stopping_ && Synced(); }
  // Blocks until Synced() or `stop`; false when stopped.
  bool WaitForSync(const std::stop_token& stop);
  runtime::HttpResponse Handle(boost::beast::http::verb method, std::string_view target);
  int StartServers(runtime::HttpServerThread& probes, runtime::HttpServerThread& metrics);
  void OnLeadership(bool leading);
  // Every allowed backend's API, every api_check_interval, served or not (a
  // CRD removed, or a scheduling.k8s.io version switched by an upgrade, is
  // noticed without a restart), and at once after RecheckApiSoon.
  void ApiCheckLoop(const std::stop_token& stop);
  // One check of `backend`'s API (native: discovery of the scheduling.k8s.io
  // version); true while it is served but its caches are still syncing.
  // `reported`: the outage was logged.
  bool CheckBackend(workloadbuilder::Backend backend, bool& reported);
  void CheckNative(bool& reported, bool& syncing);
  base::Status CheckBackendApi(workloadbuilder::Backend backend);
  // `backend`'s API answered 404 (or discovery found no version).
  void NotServed(workloadbuilder::Backend backend, const base::Status& why, bool& reported);
  // The API of `backend` is served: once its caches synced, reconcile.
  bool MarkServedWhenSynced(workloadbuilder::Backend backend);

  const ControllerOptions& options_;
  const runtime::Logger& log_;
  kube::Client client_;
  Metrics metrics_;
  KubeApi api_;
  RecentWrites recent_;
  std::vector<Loop> loops_;  // before caches_, whose handlers call Enqueue
  const std::vector<workloadbuilder::Backend> allowed_;
  Caches caches_;
  EventRecorder events_;
  std::unique_ptr<LeaderElector> elector_;
  // By backend: set only once its API is served and its caches synced.
  std::array<std::atomic<bool>, workloadbuilder::kAllBackends.size()> served_{};
  std::array<std::atomic<bool>, workloadbuilder::kAllBackends.size()> syncing_{};
  std::atomic<bool> api_checked_{false};  // the first check of every allowed backend ended
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

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_MANAGER_H_
