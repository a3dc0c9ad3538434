// The companion reconciler put together: `wasd reconciler` fills
// ControllerOptions from its flags and calls RunController(), which makes the
// Manager (manager.h: caches, client, leader election, the scheduling-API
// check, probes, metrics — and their lifecycle) and its controllers, each
// with its own queue: the plan (plan_reconciler.h) and, with --gang-status,
// the gang doctor (gang_status_reconciler.h).
//
// Thread-safe: RunController blocks the calling thread until `stop`.
#ifndef WASD_RECONCILER_CONTROLLER_H_
#define WASD_RECONCILER_CONTROLLER_H_

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/config.h"
#include "planner/leader_election.h"
#include "reconciler/gang_member_series.h"
#include "runtime/http_server.h"
#include "runtime/listen.h"
#include "runtime/log.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::reconciler {

struct ControllerOptions {
  kube::Config kube;
  bool leader_elect = true;
  planner::LeaderElectionConfig election;  // lease namespace and identity filled by the caller
  runtime::ListenAddress probe_address{"0.0.0.0", 8081, true};    // enabled false = off
  runtime::ListenAddress metrics_address{"0.0.0.0", 8443, true};  // enabled false = off
  runtime::MetricsServing metrics_serving;
  // Filled by cmd/ when metrics_serving.secure: TLS and the auth gate.
  runtime::HttpSecurity metrics_security;
  // Concurrent reconciles. Two keep a slow API call from stalling everything
  // while staying gentle on the API server.
  int workers = 2;
  // Every Deployment is reconciled again this often (level-triggered safety
  // net); a steady state makes no writes.
  std::chrono::milliseconds resync{std::chrono::minutes(10)};
  // Re-check a scheduling API that is not served every 30 s.
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
  // --normal-events: post Normal Events (WorkloadCreated, PodGroupCreated,
  // Scheduled, ...) as well as Warnings. Off by default: they tell what the
  // objects and the GangScheduled condition already say, and cost one write
  // each (at 10,000 Deployments, half of the creation's writes).
  bool normal_events = false;
  // --controller-runtime-metrics: also export the controller_runtime_*,
  // workqueue_* and leader_election_master_status families, which count the
  // same work as wasd_reconciler_* (deprecated; docs/support.md).
  bool controller_runtime_metrics = true;
  // --gang-member-metrics and --gang-member-metrics-max-gangs (0: no limit):
  // which gangs get wasd_gang_members series (gang_member_series.h).
  GangMemberSeries gang_member_series = GangMemberSeries::kNotScheduled;
  std::size_t gang_member_max_gangs = kDefaultGangMemberMaxGangs;
};

// The backends `settings` allows, in kAllBackends order (only `backend`
// when the allowed list is empty).
std::vector<workloadbuilder::Backend> AllowedBackends(
    const workloadbuilder::BackendSettings& settings);

// What to install or turn on so that `backend`'s API is served (for logs and
// the APINotServed Event).
std::string WhatToInstall(workloadbuilder::Backend backend);

// "scheduling.k8s.io workloads and podgroups",
// "scheduling.volcano.sh/v1beta1 podgroups" (for logs and Events).
std::string ApiWords(workloadbuilder::Backend backend);

// Q22: a Deployment whose stored object keeps spec.scheduling is managed by
// the in-tree Deployment controller (kube-apiserver drops the field where the
// WorkloadWithDeployment gate is off). wasd's carrier is the annotation alone:
// it writes nothing for such a Deployment. Pure.
bool InTreeManaged(const nlohmann::json& deployment);

// Runs until `stop` is requested. Returns the exit code: 0 after a clean
// stop, 1 when a listener could not be opened.
int RunController(const ControllerOptions& options, const std::stop_token& stop,
                  const runtime::Logger& log);

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_CONTROLLER_H_
