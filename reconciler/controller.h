// Controller: the companion reconciler put together — caches, work queue,
// workers, planner + executor, leader election, the scheduling-API check,
// probes and metrics. `wasd reconciler` fills ControllerOptions from its
// flags and calls RunController().
//
// Lifecycle: probes and metrics listen first; caches start; the scheduling
// API check runs for each allowed backend (every api_check_interval until its
// API is served — native: Workloads and PodGroups; the others: their
// PodGroup CRD — the process stays up and healthy, logs, and records one
// APINotServed Event per Deployment of that backend, whose pods stay gated:
// never a fall back to pod-by-pod scheduling); leader election starts; workers start
// once every cache the plan reads has synced and the first API check ended
// (Q13: no plan from a half-filled cache), and reconcile keys only while this
// replica leads. Readiness follows the same sync. On stop: readiness off,
// queue closed, workers joined, then the Lease released, caches stopped.
//
// Thread-safe: RunController blocks the calling thread until `stop`.
#ifndef WASD_RECONCILER_CONTROLLER_H_
#define WASD_RECONCILER_CONTROLLER_H_

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include "base/listen.h"
#include "base/log.h"
#include "kube/config.h"
#include "planner/leader_election.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::reconciler {

struct ControllerOptions {
  kube::Config kube;
  bool leader_elect = true;
  planner::LeaderElectionConfig election;  // lease namespace and identity filled by the caller
  base::ListenAddress probe_address{"0.0.0.0", 8081, true};    // enabled false = off
  base::ListenAddress metrics_address{"0.0.0.0", 8080, true};  // enabled false = off
  // Concurrent reconciles. Two keep a slow API call from stalling everything
  // while staying gentle on the API server.
  int workers = 2;
  // Every Deployment is reconciled again this often (level-triggered safety
  // net); a steady state makes no writes.
  std::chrono::milliseconds resync{std::chrono::minutes(10)};
  // docs/design.md: re-check a scheduling API that is not served every 30 s.
  std::chrono::milliseconds api_check_interval{std::chrono::seconds(30)};
  // --backend, --allowed-backends and the cluster facts: which group APIs
  // are checked and watched, and what the non-native compilers need.
  workloadbuilder::BackendSettings backends;
  // --gang-status: the gang doctor's GangScheduled condition, Events and
  // wasd_gang_* metrics (reconciler/gang_status.h); also watches Nodes and
  // bound pods for the fit preview, from the first gang that needs one.
  bool gang_status = true;
  // --gang-status-delay: how long a GangScheduled condition that is not
  // Scheduled waits before it is written (transient reasons of a gang on
  // its way are not published; reconciler/gang_status.h). 0: at once.
  // 5 s: kube-scheduler places a gang that fits within a second or two of
  // its last gate being lifted, so such a gang reaches Scheduled before
  // anything is written, and a Pending gang is still explained long before
  // anyone looks.
  std::chrono::milliseconds gang_status_delay{std::chrono::seconds(5)};
};

// The backends `settings` allows, in kAllBackends order (only `backend`
// when the allowed list is empty).
std::vector<workloadbuilder::Backend> AllowedBackends(
    const workloadbuilder::BackendSettings& settings);

// What to install or turn on so that `backend`'s API is served (for logs and
// the APINotServed Event).
std::string WhatToInstall(workloadbuilder::Backend backend);

// Runs until `stop` is requested. Returns the exit code: 0 after a clean
// stop, 1 when a listener could not be opened.
int RunController(const ControllerOptions& options, const std::stop_token& stop,
                  const base::Logger& log);

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_CONTROLLER_H_
