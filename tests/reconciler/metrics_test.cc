// Metrics: wasd's own names and the controller-runtime / client-go names side
// by side, from the same counters.
#include "reconciler/metrics.h"

#include <catch2/catch.hpp>
#include <string>

namespace wasd::reconciler {
namespace {

using namespace std::chrono_literals;

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// The same finished reconciles under wasd's names and controller-runtime's.
void CheckOutcomes(const std::string& text, int own_success, int cr_success, int cr_requeue_after,
                   int durations) {
  const auto n = [](int v) { return " " + std::to_string(v); };
  CHECK(Has(text, "wasd_reconciler_reconciles_total{result=\"success\"}" + n(own_success)));
  CHECK(Has(text, "controller_runtime_reconcile_total{controller=\"wasd\",result=\"success\"}" +
                      n(cr_success)));
  CHECK(
      Has(text, "controller_runtime_reconcile_total{controller=\"wasd\",result=\"requeue_after\"}" +
                    n(cr_requeue_after)));
  CHECK(Has(text,
            "controller_runtime_reconcile_time_seconds_count{controller=\"wasd\"}" + n(durations)));
  CHECK(Has(text, "workqueue_work_duration_seconds_count{controller=\"wasd\",name=\"wasd\"}" +
                      n(durations)));
  CHECK(Has(text, "wasd_reconciler_reconcile_duration_seconds_count" + n(durations)));
}

TEST_CASE("reconcile outcomes under both names", "[unit]") {
  Metrics m;
  m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kSuccess);
  m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kSuccess);
  m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kRequeueAfter);
  m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kError);
  const std::string text = m.Render();
  CheckOutcomes(text, 3, 2, 1, 4);
  CHECK(Has(text, "wasd_reconciler_reconciles_total{result=\"error\"} 1"));
  CHECK(Has(text, "wasd_reconciler_errors_total 1"));
  CHECK(Has(text, "controller_runtime_reconcile_total{controller=\"wasd\",result=\"requeue\"} 0"));
  CHECK(Has(text, "controller_runtime_reconcile_total{controller=\"wasd\",result=\"error\"} 1"));
  CHECK(Has(text, "controller_runtime_reconcile_errors_total{controller=\"wasd\"} 1"));
  CHECK(m.reconciles() == 4);
}

TEST_CASE("the deprecated duplicates say so and go with --controller-runtime-metrics=false",
          "[unit]") {
  Metrics m;
  m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kSuccess);
  const std::string on = m.Render();
  const char* const deprecated[][2] = {
      {"controller_runtime_reconcile_total", "wasd_reconciler_reconciles_total"},
      {"controller_runtime_reconcile_errors_total", "wasd_reconciler_errors_total"},
      {"controller_runtime_reconcile_time_seconds", "wasd_reconciler_reconcile_duration_seconds"},
      {"workqueue_depth", "wasd_reconciler_queue_depth"},
      {"workqueue_queue_duration_seconds", "wasd_reconciler_queue_latency_seconds"},
      {"leader_election_master_status", "wasd_reconciler_leader"}};
  for (const auto& [name, own] : deprecated) {
    INFO(name);
    CHECK(on.find(std::string("# HELP ") + name + " DEPRECATED: use " + own + " ") !=
          std::string::npos);
  }
  m.SetControllerRuntimeNames(false);
  const std::string off = m.Render();
  for (const auto& [name, own] : deprecated) {
    INFO(name);
    CHECK(off.find(std::string("\n") + name) == std::string::npos);
    CHECK(off.find(std::string("\n# TYPE ") + own + " ") != std::string::npos);
  }
  // The families without a wasd_reconciler_* twin stay, not deprecated.
  CHECK(off.find("# HELP workqueue_adds_total Keys put") != std::string::npos);
  CHECK(off.find("# HELP controller_runtime_active_workers Workers") != std::string::npos);
}

TEST_CASE("one scrape is one snapshot: work that ends mid-render shows in the next", "[unit]") {
  Metrics m;
  m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kSuccess);
  // The doctor's families render between wasd's own and controller-runtime's;
  // reconciles that end while they do must not reach only the second half.
  m.SetExtraSource([&m](std::string*) {
    m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kSuccess);
    m.ReconcileFinished(m.ReconcileStarted(), Metrics::Outcome::kRequeueAfter);
  });
  CheckOutcomes(m.Render(), 1, 1, 0, 1);
  m.SetExtraSource(nullptr);
  CheckOutcomes(m.Render(), 3, 2, 1, 3);
}

TEST_CASE("work in progress: active workers, unfinished and longest seconds", "[unit]") {
  Metrics m;
  m.SetWorkers(4);
  const auto t0 = m.ReconcileStarted();
  const auto t1 = m.ReconcileStarted();
  const std::string busy = m.Render(0, t0 + 3s);
  CHECK(Has(busy, "controller_runtime_max_concurrent_reconciles{controller=\"wasd\"} 4"));
  CHECK(Has(busy, "controller_runtime_active_workers{controller=\"wasd\"} 2"));
  CHECK(busy.find(
            "workqueue_longest_running_processor_seconds{controller=\"wasd\",name=\"wasd\"} 3") !=
        std::string::npos);
  m.ReconcileFinished(t0, Metrics::Outcome::kSuccess);
  m.ReconcileFinished(t1, Metrics::Outcome::kSuccess);
  const std::string idle = m.Render(0, t0 + 5s);
  CHECK(Has(idle, "controller_runtime_active_workers{controller=\"wasd\"} 0"));
  CHECK(Has(idle, "workqueue_unfinished_work_seconds{controller=\"wasd\",name=\"wasd\"} 0"));
  CHECK(Has(idle,
            "workqueue_longest_running_processor_seconds{controller=\"wasd\",name=\"wasd\"} 0"));
}

TEST_CASE("queue, leader and gated pods come from their sources", "[unit]") {
  Metrics m;
  m.SetQueueStatsSource([] { return QueueStats{3, 17, 5}; });
  m.SetGatedPodsSource([] { return GatedPods{2, 1000}; });
  m.SetLeader(true);
  m.ObserveQueueLatency(20ms);
  const std::string text = m.Render(1600, Metrics::Clock::now());
  CHECK(Has(text, "wasd_reconciler_queue_depth 3"));
  CHECK(Has(text, "workqueue_depth{controller=\"wasd\",name=\"wasd\"} 3"));
  CHECK(Has(text, "workqueue_adds_total{controller=\"wasd\",name=\"wasd\"} 17"));
  CHECK(Has(text, "workqueue_retries_total{controller=\"wasd\",name=\"wasd\"} 5"));
  CHECK(Has(
      text,
      "workqueue_queue_duration_seconds_bucket{controller=\"wasd\",name=\"wasd\",le=\"0.025\"} 1"));
  CHECK(Has(text, "wasd_reconciler_queue_latency_seconds_bucket{le=\"0.01\"} 0"));
  CHECK(Has(text, "wasd_reconciler_leader 1"));
  CHECK(Has(text, "leader_election_master_status{name=\"wasd-reconciler\"} 1"));
  CHECK(Has(text, "wasd_reconciler_gated_pods 2"));
  CHECK(Has(text, "wasd_reconciler_oldest_gated_pod_age_seconds 600"));
  m.SetGatedPodsSource([] { return GatedPods{}; });
  CHECK(
      Has(m.Render(1600, Metrics::Clock::now()), "wasd_reconciler_oldest_gated_pod_age_seconds 0"));
}

TEST_CASE("bucket bounds print exactly (no 0.10000000000000001)", "[unit]") {
  const std::string text = Metrics().Render();
  CHECK(Has(text, "wasd_reconciler_reconcile_duration_seconds_bucket{le=\"0.1\"} 0"));
  CHECK(text.find("0000000000") == std::string::npos);
}

}  // namespace
}  // namespace wasd::reconciler
