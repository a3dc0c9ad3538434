// Manager: what the reconciler's controllers share, and their lifecycle —
// the API client, the informer caches, the Event recorder, leader election,
// the scheduling-API check, probes and metrics. Each controller is a
// Reconciler with its own WorkerLoop (its own queue); every key an informer
// event names goes to every loop.
//
// Lifecycle (Run): probes and metrics listen first; caches start; the
// scheduling API check runs for each allowed backend (every
// api_check_interval until its API is served — native: Workloads and
// PodGroups; the others: their PodGroup CRD — the process stays up and
// healthy and logs; the plan records one APINotServed Event per Deployment of
// that backend, whose pods stay gated: never a fall back to pod-by-pod
// scheduling); leader election starts; the loops start once every cache a
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
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "base/http_server.h"
#include "base/log.h"
#include "kube/client.h"
#include "reconciler/api.h"
#include "reconciler/caches.h"
#include "reconciler/controller.h"
#include "reconciler/events.h"
#include "reconciler/kube_api.h"
#include "reconciler/leader_elector.h"
#include "reconciler/metrics.h"
#include "reconciler/recent_writes.h"
#include "reconciler/worker_loop.h"

namespace wasd::reconciler {

class Manager {
 public:
  Manager(const ControllerOptions& options, const base::Logger& log);
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
  const base::Logger& log() const { return log_; }
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
  base::HttpResponse Handle(boost::beast::http::verb method, std::string_view target);
  int StartServers(base::HttpServerThread& probes, base::HttpServerThread& metrics);
  void OnLeadership(bool leading);
  void ApiCheckLoop(const std::stop_token& stop);
  base::Status CheckBackendApi(workloadbuilder::Backend backend);

  const ControllerOptions& options_;
  const base::Logger& log_;
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
  std::atomic<bool> api_checked_{false};  // the first check of every allowed backend ended
  std::atomic<bool> stopping_{false};
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_MANAGER_H_
