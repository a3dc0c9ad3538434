// The gang doctor's observation seam (reconciler/observe.h): the view the
// reconciler and `wasd explain` both hand to doctor::Diagnose. ObserveLive
// itself is driven end to end by tests/e2e/test_explain.py.
#include "reconciler/observe.h"

#include <catch2/catch.hpp>

#include "tests/planner/plan_fixtures.h"

namespace wasd::reconciler {
namespace {

using nlohmann::json;
using planner::testing::Obj;

TEST_CASE("GangViewOf borrows the observed objects and picks the Deployment's Workload") {
  planner::PlanInput in;
  const json dep = planner::testing::Deployment(4);
  in.deployment = Obj(dep);
  const json rs = planner::testing::ReplicaSet("abc", "rs-uid-1", 4);
  in.replicasets.push_back(Obj(rs));
  in.pods.push_back(Obj(planner::testing::Pod("p-1", rs)));
  json other = planner::testing::StoredWorkload(dep);
  other["metadata"]["name"] = "someone-elses";
  in.workloads.push_back(Obj(other));
  in.workloads.push_back(Obj(planner::testing::StoredWorkload(dep)));
  in.scheduling_api_version = "scheduling.k8s.io/v1";
  const workloadbuilder::ClusterFacts facts;

  const doctor::GangView v = GangViewOf(in, true, &facts);
  CHECK(v.deployment == in.deployment.get());
  REQUIRE(v.replicasets.size() == 1);
  CHECK(v.replicasets[0] == in.replicasets[0].get());
  REQUIRE(v.pods.size() == 1);
  CHECK(v.pods[0] == in.pods[0].get());
  CHECK(v.workload == in.workloads[1].get());
  CHECK(v.scheduling_api_version == "scheduling.k8s.io/v1");
  CHECK(v.facts == &facts);
  CHECK(v.api_served);
}

TEST_CASE("GangViewOf of a Deployment that is gone is empty") {
  planner::PlanInput in;
  const doctor::GangView v = GangViewOf(in, false, nullptr);
  CHECK(v.deployment == nullptr);
  CHECK(v.pods.empty());
  CHECK_FALSE(v.api_served);
}

TEST_CASE("a live observation's view adds the Events, Nodes and bound pods") {
  LiveObservation o;
  o.objects.deployment = Obj(planner::testing::Deployment(2));
  o.events.push_back({{"reason", "FailedScheduling"}});
  o.nodes.push_back({{"metadata", {{"name", "n1"}}}});
  const doctor::GangView v = o.View();
  REQUIRE(v.events.size() == 1);
  CHECK(v.events[0] == &o.events[0]);
  REQUIRE(v.nodes.size() == 1);
  CHECK(v.bound_pods.empty());
  CHECK(v.facts == &o.objects.facts);
}

TEST_CASE("an observation failure reads as the API server's answer in words") {
  CHECK(ObserveFailure{"deployment \"x\" not found in namespace \"d\"", {}}.ToString() ==
        "deployment \"x\" not found in namespace \"d\"");
  const ObserveFailure forbidden{"listing pods in d",
                                 base::Status::Http(403, "Forbidden", "pods is forbidden")};
  CHECK(forbidden.ToString() == "listing pods in d: no access (forbidden): pods is forbidden");
}

}  // namespace
}  // namespace wasd::reconciler
