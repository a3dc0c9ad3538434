// Test fixtures for the reconciler's I/O half: an Executor (with its
// RecentWrites, Metrics, EventRecorder and a quiet Log) over a FakeApi that
// holds the Deployment "web" of tests/planner/plan_fixtures.h, and the
// planner's input read back from the FakeApi — what the caches would hold
// once the watches caught up.
#ifndef WASD_TESTS_RECONCILER_RECONCILER_FIXTURES_H_
#define WASD_TESTS_RECONCILER_RECONCILER_FIXTURES_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "planner/plan.h"
#include "reconciler/events.h"
#include "reconciler/executor.h"
#include "reconciler/metrics.h"
#include "reconciler/recent_writes.h"
#include "runtime/log.h"
#include "tests/planner/plan_fixtures.h"
#include "tests/reconciler/fake_api.h"

namespace wasd::reconciler::testing {

// Everything the FakeApi holds in namespace `ns` for the Deployment `name`
// (the planner picks what is its own).
inline planner::PlanInput ObserveFake(const FakeApi& api, const std::string& ns,
                                      const std::string& name) {
  using planner::testing::Obj;
  planner::PlanInput in;
  const std::optional<nlohmann::json> d = api.Find(kube::Deployments(), ns, name);
  if (d) in.deployment = Obj(*d);
  for (const nlohmann::json& o : api.Objects(Workloads(), ns)) in.workloads.push_back(Obj(o));
  for (const nlohmann::json& o : api.Objects(kube::ReplicaSets(), ns)) {
    in.replicasets.push_back(Obj(o));
  }
  // The group objects of the Deployment's backend (native: PodGroups()).
  const workloadbuilder::Backend backend =
      in.deployment != nullptr
          ? planner::BackendOf(*in.deployment).value_or(workloadbuilder::Backend::kNative)
          : workloadbuilder::Backend::kNative;
  for (const nlohmann::json& o : api.Objects(GroupResource(backend), ns)) {
    in.podgroups.push_back(Obj(o));
  }
  for (const nlohmann::json& o : api.Objects(kube::Pods(), ns)) in.pods.push_back(Obj(o));
  return in;
}

// One executor over a FakeApi holding `deployment` (default: "web", 3
// replicas, gang).
struct Harness {
  FakeApi api;
  RecentWrites recent;
  Metrics metrics;
  const runtime::Logger log{runtime::LogLevel::kError};
  EventRecorder events{api, log, "test-replica"};
  bool leader = true;
  Executor executor{api, recent, events, metrics, log, [this] { return leader; }};
  nlohmann::json deployment;

  explicit Harness(nlohmann::json d = planner::testing::Deployment(3))
      : deployment(api.Put(kube::Deployments(), std::move(d))) {}

  ExecuteOutcome Run(std::vector<planner::Action> actions) {
    planner::Plan plan;
    plan.actions = std::move(actions);
    return executor.Execute(deployment, plan);
  }
  // Reasons of the Events posted, in order of name (random suffixes).
  std::vector<std::string> EventReasons() const {
    std::vector<std::string> out;
    for (const nlohmann::json& e : api.Objects(kube::Events(), planner::testing::kNs)) {
      out.push_back(e.value("reason", ""));
    }
    return out;
  }
  std::string EventMessage(std::string_view reason) const {
    for (const nlohmann::json& e : api.Objects(kube::Events(), planner::testing::kNs)) {
      if (e.value("reason", "") == reason) return e.value("message", "");
    }
    return "";
  }
  objects::Object Recent(Kind kind, const std::string& name, const objects::Object& cached) {
    return recent.Resolve(kind, planner::testing::kNs, name, [&] { return cached; });
  }
  planner::PlanInput Observe() const {
    return ObserveFake(api, planner::testing::kNs, objects::NameOf(deployment));
  }
  // The planner's actions for the objects the fake holds now.
  planner::Plan PlanNow() const { return planner::PlanDeployment(Observe()); }
};

}  // namespace wasd::reconciler::testing

#endif  // WASD_TESTS_RECONCILER_RECONCILER_FIXTURES_H_
