// The replan loop (plan_rounds.h) against the in-memory API server: a new
// Deployment converges in two rounds, a steady state writes nothing, the
// loop is bounded, errors go back to the queue, and the PriorityClass a new
// Workload needs is read live.
#include "reconciler/plan_rounds.h"

#include <catch2/catch.hpp>

#include "tests/reconciler/reconciler_fixtures.h"

namespace wasd::reconciler {
namespace {

using nlohmann::json;
using planner::testing::Deployment;
using planner::testing::kNs;
using planner::testing::Pod;
using planner::testing::ReplicaSet;
using planner::testing::Terminating;
using planner::testing::WorkloadName;
using testing::Harness;

const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");

ReconcileResult Reconcile(Harness& h) {
  return RunPlanRounds(
      "ml/web", [&h] { return h.Observe(); }, h.api, h.executor, h.log);
}

// The Deployment's first ReplicaSet with three gated pods, as the
// Deployment controller makes them.
void RollOut(Harness& h) {
  const json rs = h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a", 3));
  for (const char* pod : {"web-aaaa-1", "web-aaaa-2", "web-aaaa-3"}) {
    h.api.Put(kube::Pods(), Pod(pod, rs));
  }
}

bool Gated(const Harness& h, const std::string& pod) {
  return objects::GateIndex(*h.api.Find(kube::Pods(), kNs, pod), "wasd.io/pod-group").has_value();
}

TEST_CASE("plan rounds: a new Deployment converges in two rounds", "[unit]") {
  Harness h;
  RollOut(h);
  const ReconcileResult first = Reconcile(h);
  CHECK(first.status.ok());
  CHECK(first.rounds == 2);  // the Workload, then (with its UID) PodGroups and gates
  CHECK_FALSE(first.requeue_after);
  CHECK(h.api.Find(Workloads(), kNs, WorkloadName()));
  const std::optional<json> pg = h.api.Find(PodGroups(), kNs, kPgA);
  REQUIRE(pg);
  CHECK((*pg)["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3);
  for (const char* pod : {"web-aaaa-1", "web-aaaa-2", "web-aaaa-3"}) CHECK_FALSE(Gated(h, pod));
  CHECK(h.metrics.writes() == 5);  // Workload, PodGroup, three gates
  CHECK(first.writes == 5);        // the reconcile's own count says the same
  CHECK(h.EventReasons().size() == 2);

  // Level-triggered: the same state again plans nothing and writes nothing.
  const int writes = h.api.calls("create") + h.api.calls("patch") + h.api.calls("delete");
  const ReconcileResult again = Reconcile(h);
  CHECK(again.status.ok());
  CHECK(again.rounds == 1);
  CHECK(again.writes == 0);
  CHECK_FALSE(again.requeue_after);
  CHECK(h.api.calls("create") + h.api.calls("patch") + h.api.calls("delete") == writes);
}

TEST_CASE("plan rounds: a scale-up patches the Workload, then the PodGroup, in one round",
          "[unit]") {
  Harness h;
  RollOut(h);
  REQUIRE(Reconcile(h).status.ok());
  json d = *h.api.Find(kube::Deployments(), kNs, "web");
  d["spec"]["replicas"] = 5;
  h.api.Put(kube::Deployments(), d);
  json rs = *h.api.Find(kube::ReplicaSets(), kNs, "web-aaaa");
  rs["spec"]["replicas"] = 5;
  h.api.Put(kube::ReplicaSets(), rs);
  const ReconcileResult r = Reconcile(h);
  CHECK(r.status.ok());
  CHECK(r.rounds == 1);
  CHECK(h.api.Find(Workloads(), kNs, WorkloadName())
            ->at("spec")["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 5);
  CHECK(h.api.Find(PodGroups(), kNs, kPgA)->at("spec")["schedulingPolicy"]["gang"]["minCount"] ==
        5);
}

TEST_CASE("plan rounds: the loop is bounded and then requeues", "[unit]") {
  Harness h;
  // A cache that never catches up: every round sees a Deployment without
  // its Workload. The first create lands; every later one is AlreadyExists,
  // re-read and replanned, never a second object.
  const planner::PlanInput stale = h.Observe();
  int observed = 0;
  const ReconcileResult r = RunPlanRounds(
      "ml/web",
      [&] {
        ++observed;
        return stale;
      },
      h.api, h.executor, h.log);
  CHECK(r.status.ok());
  CHECK(r.rounds == kMaxPlanRounds);
  CHECK(observed == kMaxPlanRounds);
  CHECK(r.requeue_after == kStillChangingRequeue);
  // One Workload create per round (the first lands), one WorkloadCreated Event.
  CHECK(h.api.calls("create") == kMaxPlanRounds + 1);
  CHECK(h.api.Objects(Workloads(), kNs).size() == 1);
}

TEST_CASE("plan rounds: a failed write ends the reconcile with its error", "[unit]") {
  Harness h;
  RollOut(h);
  h.api.FailNext("create", testing::InternalError("etcdserver: request timed out"), "podgroups");
  const ReconcileResult r = Reconcile(h);
  CHECK(r.status.http_code() == 500);  // the worker retries with backoff
  CHECK(r.rounds == 2);
  CHECK(Gated(h, "web-aaaa-1"));  // no gate lifted without its PodGroup
  // The retry converges.
  const ReconcileResult retry = Reconcile(h);
  CHECK(retry.status.ok());
  CHECK(retry.rounds == 1);
  CHECK_FALSE(Gated(h, "web-aaaa-1"));
}

TEST_CASE("plan rounds: a requeue the plan asks for is passed on", "[unit]") {
  Harness h;
  RollOut(h);
  REQUIRE(Reconcile(h).status.ok());
  // Its PodGroup is Terminating while a pod that ran still names it.
  h.api.Put(PodGroups(), Terminating(*h.api.Find(PodGroups(), kNs, kPgA)));
  json pod = *h.api.Find(kube::Pods(), kNs, "web-aaaa-1");
  pod["spec"]["nodeName"] = "node-1";
  h.api.Put(kube::Pods(), pod);
  const ReconcileResult r = Reconcile(h);
  CHECK(r.status.ok());
  CHECK(r.requeue_after == planner::kTerminatingRecheck);
}

TEST_CASE("plan rounds: a Deployment that is gone, or a replica that lost the Lease, stops",
          "[unit]") {
  Harness h;
  SECTION("gone") {
    h.api.Delete(kube::Deployments(), kNs, "web", "", "");
    const ReconcileResult r = Reconcile(h);
    CHECK(r.status.ok());
    CHECK(r.rounds == 1);
  }
  SECTION("not the leader") {
    h.leader = false;
    const ReconcileResult r = Reconcile(h);
    CHECK(r.status.ok());
    CHECK(r.rounds == 1);
  }
  CHECK(h.api.calls("create") == 0);
}

// --- PriorityClass (M3) ---------------------------------------------------------

json WithPriorityClass(json d, const std::string& name) {
  d["spec"]["template"]["spec"]["priorityClassName"] = name;
  return d;
}

TEST_CASE("plan rounds: the PriorityClass of a new Workload is read live", "[unit]") {
  Harness h(WithPriorityClass(Deployment(3), "batch-high"));
  h.api.Put(PriorityClasses(), {{"apiVersion", "scheduling.k8s.io/v1"},
                                {"kind", "PriorityClass"},
                                {"metadata", {{"name", "batch-high"}}},
                                {"value", 1000}});
  REQUIRE(Reconcile(h).status.ok());
  const json w = *h.api.Find(Workloads(), kNs, WorkloadName());
  CHECK(w["spec"]["podGroupTemplates"][0]["priorityClassName"] == "batch-high");
  // Once the Workload exists it is not read again.
  REQUIRE(Reconcile(h).status.ok());
  int pc_reads = 0;
  for (const std::string& call : h.api.log()) pc_reads += call == "get priorityclasses /batch-high";
  CHECK(pc_reads == 1);
}

TEST_CASE("plan rounds: a missing PriorityClass is left out, a failed read retries", "[unit]") {
  SECTION("missing") {
    Harness h(WithPriorityClass(Deployment(3), "nope"));
    REQUIRE(Reconcile(h).status.ok());
    const json w = *h.api.Find(Workloads(), kNs, WorkloadName());
    CHECK_FALSE(w["spec"]["podGroupTemplates"][0].contains("priorityClassName"));
    CHECK(h.EventMessage("PriorityClassSkipped").find("nope was not found") != std::string::npos);
  }
  SECTION("unreadable") {
    Harness h(WithPriorityClass(Deployment(3), "batch-high"));
    h.api.FailNext("get", testing::InternalError("x"), "priorityclasses");
    const ReconcileResult r = Reconcile(h);
    CHECK(r.status.http_code() == 500);  // a guess would stick: the template is immutable
    CHECK(h.api.calls("create") == 0);
  }
}

}  // namespace
}  // namespace wasd::reconciler
