// The executor against the in-memory API server (fake_api.h): one test per
// branch of executor.h — get-or-create, refused creates, stale patches,
// owner liveness, the Q13 delete check with preconditions, the Q14 release,
// Q11 stripped claims, the leader check, and stopping at the first failure.
#include "reconciler/executor.h"

#include <catch2/catch.hpp>

#include "planner/plan.h"
#include "reconciler/deleted_names.h"
#include "tests/planner/plan_fixtures.h"
#include "tests/reconciler/fake_api.h"
#include "tests/reconciler/reconciler_fixtures.h"

namespace wasd::reconciler {
namespace {

using nlohmann::json;
using planner::Action;
using planner::Plan;
using planner::testing::Deployment;
using planner::testing::kNs;
using planner::testing::Obj;
using planner::testing::Pod;
using planner::testing::ReplicaSet;
using planner::testing::StoredPodGroup;
using planner::testing::StoredWorkload;
using planner::testing::Terminating;
using planner::testing::WorkloadName;
using testing::FakeApi;
using testing::Harness;
using namespace std::chrono_literals;

const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");

json WithoutGates(json pod) {
  pod["spec"].erase("schedulingGates");
  return pod;
}

// --- create -----------------------------------------------------------------

TEST_CASE("executor: create stores the Workload, records the answer and counts the write",
          "[unit]") {
  Harness h;
  const Plan plan = h.PlanNow();  // CreateWorkload + Event WorkloadCreated
  const ExecuteOutcome out = h.executor.Execute(h.deployment, plan);
  CHECK(out.status.ok());
  CHECK(out.writes == 1);
  CHECK_FALSE(out.replan);  // the plan's needs_replan says so, not the executor
  const auto stored = h.api.Find(Workloads(), kNs, WorkloadName());
  REQUIRE(stored);
  // The owner was read live before the create; nothing else was written.
  const std::vector<std::string> log = h.api.log();
  REQUIRE(log.size() == 3);
  CHECK(log[0] == "get deployments ml/web");
  CHECK(log[1] == "create workloads ml/" + WorkloadName());
  CHECK(log[2].rfind("create events ml/web.", 0) == 0);  // the WorkloadCreated Event
  const objects::Object recorded = h.Recent(Kind::kWorkload, WorkloadName(), nullptr);
  REQUIRE(recorded != nullptr);
  CHECK(objects::UidOf(*recorded) == objects::UidOf(*stored));
  CHECK(h.metrics.writes() == 1);
  CHECK(h.EventReasons() == std::vector<std::string>{"WorkloadCreated"});
}

TEST_CASE("executor: create AlreadyExists re-reads the object and asks for a replan", "[unit]") {
  Harness h;
  const Plan plan = h.PlanNow();  // planned before someone else created it
  h.api.Put(Workloads(), StoredWorkload(h.deployment, "w-uid-existing"));
  const ExecuteOutcome out = h.executor.Execute(h.deployment, plan);
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(out.writes == 0);
  CHECK(h.api.calls("create") == 1);  // never a second create, never a second object
  CHECK(h.api.Objects(Workloads(), kNs).size() == 1);
  CHECK(h.api.log().back() == "get workloads ml/" + WorkloadName());  // the refresh
  const objects::Object recorded = h.Recent(Kind::kWorkload, WorkloadName(), nullptr);
  REQUIRE(recorded != nullptr);
  CHECK(objects::UidOf(*recorded) == "w-uid-existing");
  CHECK(h.EventReasons().empty());  // stopped before the WorkloadCreated Event
}

TEST_CASE("executor: a create refused for good records FailedWorkloadCreate", "[unit]") {
  const auto [status, event] = GENERATE(
      std::make_pair(
          testing::Forbidden("workloads.scheduling.k8s.io is forbidden: denied by policy"), true),
      std::make_pair(testing::Invalid("Workload.scheduling.k8s.io \"x\" is invalid"), true),
      std::make_pair(testing::Forbidden("unable to create new content in namespace ml because it "
                                        "is being terminated"),
                     true),
      std::make_pair(base::Status::Http(400, "BadRequest", "bad request"), true),
      std::make_pair(testing::InternalError("etcd timeout"), false),
      std::make_pair(base::Status::Error(base::Status::Kind::kTimeout, "deadline"), false));
  Harness h;
  h.api.FailNext("create", status, "workloads");
  const ExecuteOutcome out = h.executor.Execute(h.deployment, h.PlanNow());
  CHECK_FALSE(out.status.ok());
  CHECK(out.status.http_code() == status.http_code());
  CHECK_FALSE(out.replan);
  CHECK(h.api.Objects(Workloads(), kNs).empty());
  if (event) {
    REQUIRE(h.EventReasons() == std::vector<std::string>{"FailedWorkloadCreate"});
    CHECK(h.EventMessage("FailedWorkloadCreate") == "Error creating Workload " + WorkloadName() +
                                                        ": " + status.message() +
                                                        " (retrying with backoff)");
  } else {
    CHECK(h.EventReasons().empty());  // transient: the log and the retry say it
  }
}

TEST_CASE("executor: a refused PodGroup create records FailedPodGroupCreate", "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a", 3));
  h.api.FailNext("create", testing::Forbidden("no"), "podgroups");
  const ExecuteOutcome out = h.executor.Execute(h.deployment, h.PlanNow());
  CHECK(out.status.http_code() == 403);
  CHECK(h.api.Objects(PodGroups(), kNs).empty());
  CHECK(h.EventReasons() == std::vector<std::string>{"FailedPodGroupCreate"});
  CHECK(h.EventMessage("FailedPodGroupCreate") ==
        "Error creating PodGroup " + kPgA + ": no (retrying with backoff)");
}

// --- owner liveness -----------------------------------------------------------

TEST_CASE("executor: no create for an owner that is gone, replaced or being deleted", "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  h.api.Put(kube::ReplicaSets(), rs);
  const Plan plan = h.PlanNow();  // CreatePodGroup for rs-a, from a cache that still has it
  REQUIRE(plan.actions.front().kind == planner::ActionKind::kCreatePodGroup);

  SECTION("gone") { h.api.Delete(kube::ReplicaSets(), kNs, "web-aaaa", "", ""); }
  SECTION("replaced by another incarnation") {
    h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a-2", 3));
  }
  SECTION("being deleted") { h.api.Put(kube::ReplicaSets(), Terminating(rs)); }
  const ExecuteOutcome out = h.executor.Execute(h.deployment, plan);
  CHECK(out.status.ok());
  CHECK_FALSE(out.replan);  // the owner's own event ends the reconcile
  CHECK(out.writes == 0);
  CHECK(h.api.calls("create") == 0);
  CHECK(h.EventReasons().empty());
}

TEST_CASE(
    "executor: trusting cached owners, a name never deleted is created without a read, "
    "one seen deleted reads its owner first",
    "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  h.api.Put(kube::ReplicaSets(), rs);
  const Plan plan = h.PlanNow();  // CreatePodGroup for rs-a
  REQUIRE(plan.actions.front().kind == planner::ActionKind::kCreatePodGroup);
  DeletedNames deleted;
  h.executor.TrustCachedOwners([&deleted](const std::string& ns, const std::string& name) {
    return deleted.Seen(ns, name);
  });
  // The garbage collector deleted the PodGroup and then the ReplicaSet: our
  // ReplicaSet cache has not seen the latter.
  h.api.Delete(kube::ReplicaSets(), kNs, "web-aaaa", "", "");

  SECTION("the PodGroup's deletion was seen: the owner is read live, nothing is created") {
    deleted.Record(kNs, kPgA);
    const ExecuteOutcome out = h.executor.Execute(h.deployment, plan);
    CHECK(out.writes == 0);
    CHECK(h.api.calls("get") == 1);
    CHECK(h.api.calls("create") == 0);
  }
  SECTION("a name never deleted: created at once on the cached owner's word") {
    const ExecuteOutcome out = h.executor.Execute(h.deployment, plan);
    CHECK(out.writes >= 1);
    CHECK(h.api.calls("get") == 0);
    CHECK(h.api.Find(PodGroups(), kNs, kPgA));
  }
}

TEST_CASE("executor: an owner that cannot be read does not block the create", "[unit]") {
  Harness h;
  h.api.FailNext("get", testing::InternalError("x"), "deployments");
  const ExecuteOutcome out = h.executor.Execute(h.deployment, h.PlanNow());
  CHECK(out.status.ok());
  CHECK(out.writes == 1);  // unsure: the write itself decides
  CHECK(h.api.Find(Workloads(), kNs, WorkloadName()));
}

TEST_CASE("executor: an owner answer without metadata is read safely", "[unit]") {
  Harness h;
  // A controller reference without a uid, and an owner without metadata:
  // both read as "" (no operator[] on the const answer).
  json pg = StoredPodGroup(StoredWorkload(h.deployment), ReplicaSet("aaaa", "rs-a", 3), "x");
  pg["metadata"].erase("uid");
  pg["metadata"]["ownerReferences"][0].erase("uid");
  h.api.PutRaw(kube::ReplicaSets(), kNs, "web-aaaa", json{{"kind", "ReplicaSet"}});
  const ExecuteOutcome out = h.Run({Action::CreatePodGroup(kPgA, pg, 0)});
  CHECK(out.status.ok());
  CHECK(out.writes == 1);
}

// --- patches ------------------------------------------------------------------

TEST_CASE("executor: a patch is applied, recorded and counted", "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  const json pg = h.api.Put(PodGroups(), StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "pg-1"));
  const ExecuteOutcome out = h.Run({Action::PatchPodGroupMinCount(kPgA, "pg-1", 5)});
  CHECK(out.status.ok());
  CHECK(out.writes == 1);
  CHECK(h.api.Find(PodGroups(), kNs, kPgA)->at("spec")["schedulingPolicy"]["gang"]["minCount"] ==
        5);
  const objects::Object recorded = h.Recent(Kind::kPodGroup, kPgA, Obj(pg));
  REQUIRE(recorded != nullptr);
  CHECK((*recorded)["spec"]["schedulingPolicy"]["gang"]["minCount"] == 5);
}

TEST_CASE("executor: a patch whose test fails re-reads the object and asks for a replan",
          "[unit]") {
  const int code = GENERATE(422, 500);  // 500: API servers that word it so
  Harness h;
  h.api.set_test_failure_code(code);
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  const json current =
      h.api.Put(PodGroups(), StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "pg-new"));
  // Planned against the previous incarnation (uid pg-old): the uid test fails.
  const ExecuteOutcome out = h.Run({Action::PatchPodGroupMinCount(kPgA, "pg-old", 5),
                                    Action::LiftGate("web-aaaa-1", "p-web-aaaa-1", 0)});
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(out.writes == 0);
  CHECK(h.api.calls("patch") == 1);  // stopped before the next action
  CHECK(h.api.log().back() == "get podgroups ml/" + kPgA);
  const objects::Object recorded = h.Recent(Kind::kPodGroup, kPgA, nullptr);
  REQUIRE(recorded != nullptr);
  CHECK(objects::UidOf(*recorded) == "pg-new");
  CHECK((*recorded)["spec"] == current["spec"]);  // unchanged
}

TEST_CASE("executor: a gate already lifted (a stale test) means a replan", "[unit]") {
  Harness h;
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  const json pod = h.api.Put(kube::Pods(), WithoutGates(Pod("web-aaaa-1", rs)));
  const ExecuteOutcome out = h.Run({Action::LiftGate("web-aaaa-1", "p-web-aaaa-1", 0)});
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(h.Recent(Kind::kPod, "web-aaaa-1", nullptr) != nullptr);
}

TEST_CASE("executor: a patch of an object that is gone records the deletion", "[unit]") {
  Harness h;
  const json cached = {{"metadata", {{"name", kPgA}, {"namespace", kNs}, {"uid", "pg-1"}}}};
  const ExecuteOutcome out = h.Run({Action::PatchPodGroupMinCount(kPgA, "pg-1", 5)});
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(h.Recent(Kind::kPodGroup, kPgA, Obj(cached)) == nullptr);  // the cache's copy is stale
}

TEST_CASE("executor: a failing write stops the plan at the first failure", "[unit]") {
  Harness h;
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  h.api.Put(kube::Pods(), Pod("web-aaaa-1", rs));
  h.api.Put(kube::Pods(), Pod("web-aaaa-2", rs));
  h.api.FailNext("patch", testing::InternalError("etcd leader changed"));
  const ExecuteOutcome out = h.Run({Action::LiftGate("web-aaaa-1", "p-web-aaaa-1", 0),
                                    Action::LiftGate("web-aaaa-2", "p-web-aaaa-2", 0),
                                    Action::Event("Normal", "Later", "not reached")});
  CHECK(out.status.http_code() == 500);
  CHECK_FALSE(out.replan);
  CHECK(out.writes == 0);
  CHECK(h.api.calls("patch") == 1);
  CHECK(h.EventReasons().empty());
  CHECK(objects::GateIndex(*h.api.Find(kube::Pods(), kNs, "web-aaaa-2"), "wasd.io/pod-group"));
}

// --- PodGroup deletion (Q13) ------------------------------------------------------

struct DeleteScene {
  Harness h;
  json pg;  // as observed by the plan

  explicit DeleteScene(bool finalizer = true) {
    const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
    json stored = StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "pg-1");
    if (!finalizer) stored["metadata"].erase("finalizers");
    pg = h.api.Put(PodGroups(), stored);
  }
  ExecuteOutcome Delete(bool owner_may_be_active = false) {
    return h.Run({Action::DeletePodGroup(pg, owner_may_be_active)});
  }
  std::string DeleteCall() const {
    return "delete podgroups ml/" + kPgA + " uid=pg-1 rv=" + objects::ResourceVersionOf(pg);
  }
};

TEST_CASE("executor: a PodGroup is deleted once the live ReplicaSet no longer needs it", "[unit]") {
  DeleteScene s;
  SECTION("at zero replicas") { s.h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a", 0)); }
  SECTION("Terminating") {
    s.h.api.Put(kube::ReplicaSets(), Terminating(ReplicaSet("aaaa", "rs-a", 3)));
  }
  SECTION("gone") {}
  SECTION("replaced by another incarnation") {
    s.h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a-2", 3));
  }
  const ExecuteOutcome out = s.Delete();
  CHECK(out.status.ok());
  CHECK(out.writes == 1);
  const std::vector<std::string> log = s.h.api.log();
  REQUIRE(log.size() == 2);
  CHECK(log[0] == "get replicasets ml/web-aaaa");  // the live read first
  CHECK(log[1] == s.DeleteCall());                 // uid and resourceVersion preconditions
  // Its finalizer keeps it: recorded as Terminating.
  const objects::Object recorded = s.h.Recent(Kind::kPodGroup, kPgA, nullptr);
  REQUIRE(recorded != nullptr);
  CHECK(objects::IsTerminating(*recorded));
}

TEST_CASE("executor: no PodGroup delete while the live ReplicaSet has replicas again", "[unit]") {
  DeleteScene s;
  s.h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a", 2));  // the cache said 0
  const ExecuteOutcome out = s.Delete();
  CHECK(out.status.ok());
  CHECK(out.writes == 0);
  CHECK(out.requeue_after == std::chrono::milliseconds(1000));
  CHECK(s.h.api.calls("delete") == 0);
  CHECK_FALSE(objects::IsTerminating(*s.h.api.Find(PodGroups(), kNs, kPgA)));
}

TEST_CASE("executor: no PodGroup delete when the ReplicaSet cannot be read", "[unit]") {
  DeleteScene s;
  s.h.api.FailNext("get", testing::InternalError("x"), "replicasets");
  const ExecuteOutcome out = s.Delete();
  CHECK(out.status.http_code() == 500);  // never delete on a guess
  CHECK(s.h.api.calls("delete") == 0);
}

TEST_CASE("executor: a superseded PodGroup name is deleted without reading the ReplicaSet",
          "[unit]") {
  DeleteScene s(/*finalizer=*/false);
  s.h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a", 3));
  const ExecuteOutcome out = s.Delete(/*owner_may_be_active=*/true);
  CHECK(out.writes == 1);
  CHECK(s.h.api.log() == std::vector<std::string>{s.DeleteCall()});
  CHECK_FALSE(s.h.api.Find(PodGroups(), kNs, kPgA));
  CHECK(s.h.Recent(Kind::kPodGroup, kPgA, Obj(s.pg)) == nullptr);  // recorded deleted
}

TEST_CASE("executor: a PodGroup answered with its final state is recorded deleted", "[unit]") {
  // Custom resources answer a DELETE with the object as it was (no
  // deletionTimestamp when nothing holds it): recorded as a live object, it
  // would be planned for deletion again until its watch event came.
  DeleteScene s(/*finalizer=*/false);
  s.h.api.set_delete_answers_object(true);
  const ExecuteOutcome out = s.Delete(/*owner_may_be_active=*/true);
  CHECK(out.writes == 1);
  CHECK_FALSE(s.h.api.Find(PodGroups(), kNs, kPgA));
  CHECK(s.h.Recent(Kind::kPodGroup, kPgA, Obj(s.pg)) == nullptr);
  CHECK(s.h.Recent(Kind::kPodGroup, kPgA, nullptr) == nullptr);
}

TEST_CASE("executor: a PodGroup changed since the plan is not deleted (precondition)", "[unit]") {
  DeleteScene s;
  json changed = s.pg;
  changed["metadata"].erase("resourceVersion");
  changed["spec"]["schedulingPolicy"]["gang"]["minCount"] = 7;
  const json now = s.h.api.Put(PodGroups(), changed);  // a newer resourceVersion
  const ExecuteOutcome out = s.Delete();
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(out.writes == 0);
  CHECK_FALSE(objects::IsTerminating(*s.h.api.Find(PodGroups(), kNs, kPgA)));
  const objects::Object recorded = s.h.Recent(Kind::kPodGroup, kPgA, nullptr);
  REQUIRE(recorded != nullptr);
  CHECK(objects::ResourceVersionOf(*recorded) == objects::ResourceVersionOf(now));
}

TEST_CASE("executor: a PodGroup already gone is recorded deleted, and a replan follows", "[unit]") {
  DeleteScene s(/*finalizer=*/false);
  s.h.api.Delete(PodGroups(), kNs, kPgA, "", "");
  const ExecuteOutcome out = s.Delete(/*owner_may_be_active=*/true);
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(s.h.Recent(Kind::kPodGroup, kPgA, Obj(s.pg)) == nullptr);
}

// --- release (Q14) --------------------------------------------------------------

TEST_CASE("executor: releasing the last finalizer of a Terminating PodGroup removes it", "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  const json pg =
      h.api.Put(PodGroups(), Terminating(StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "pg-1")));
  const ExecuteOutcome out = h.Run({Action::ReleasePodGroup(kPgA, "pg-1", 0)});
  CHECK(out.status.ok());
  CHECK(out.writes == 1);
  CHECK(out.replan);  // re-create it in the next round
  CHECK_FALSE(h.api.Find(PodGroups(), kNs, kPgA));
  CHECK(h.Recent(Kind::kPodGroup, kPgA, Obj(pg)) == nullptr);
}

TEST_CASE("executor: a release that leaves other finalizers records the PodGroup", "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  json stored = Terminating(StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "pg-1"));
  stored["metadata"]["finalizers"].push_back("example.com/keep");
  const json pg = h.api.Put(PodGroups(), stored);
  const ExecuteOutcome out = h.Run({Action::ReleasePodGroup(kPgA, "pg-1", 0)});
  CHECK(out.writes == 1);
  const objects::Object recorded = h.Recent(Kind::kPodGroup, kPgA, Obj(pg));
  REQUIRE(recorded != nullptr);
  CHECK((*recorded)["metadata"]["finalizers"] == json::array({"example.com/keep"}));
}

TEST_CASE("executor: a release planned against another incarnation re-reads it", "[unit]") {
  Harness h;
  const json w = h.api.Put(Workloads(), StoredWorkload(h.deployment));
  h.api.Put(PodGroups(), Terminating(StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "pg-2")));
  const ExecuteOutcome out = h.Run({Action::ReleasePodGroup(kPgA, "pg-1", 0)});
  CHECK(out.status.ok());
  CHECK(out.replan);
  CHECK(out.writes == 0);
  CHECK(h.api.Find(PodGroups(), kNs, kPgA)->at("metadata")["finalizers"].size() == 1);
}

// A foreign PodGroup (no controller) being deleted, held by podgroup-protection,
// and the release the planner makes for it.
struct ForeignRelease {
  Harness h;
  json rs = ReplicaSet("aaaa", "rs-a", 2);
  json pg;
  Action release = Action::ReleaseForeignPodGroup(kPgA, "pg-x", 0, {"rs-a"});

  ForeignRelease() {
    json foreign = {{"apiVersion", "scheduling.k8s.io/v1beta1"},
                    {"kind", "PodGroup"},
                    {"metadata",
                     {{"name", kPgA},
                      {"namespace", kNs},
                      {"uid", "pg-x"},
                      {"finalizers", json::array({"scheduling.k8s.io/podgroup-protection"})}}},
                    {"spec", {{"schedulingPolicy", {{"basic", json::object()}}}}}};
    pg = h.api.Put(PodGroups(), Terminating(foreign));
    h.api.Put(kube::Pods(), Pod("web-aaaa-1", rs));
    h.api.Put(kube::Pods(), Pod("web-aaaa-2", rs));
  }
  // A pod of another owner that names the PodGroup (not in wasd's caches).
  json Stranger(json gates = json::array({{{"name", "wasd.io/pod-group"}}})) {
    json pod = Pod("batch-1", ReplicaSet("zzzz", "rs-z", 1, "someone"), std::move(gates));
    pod["spec"]["schedulingGroup"]["podGroupName"] = kPgA;
    return pod;
  }
};

TEST_CASE("executor: a foreign PodGroup is released after a live pod list confirms the plan",
          "[unit]") {
  ForeignRelease f;
  SECTION("only never-run gated pods of the Deployment name it: released, and gone") {
    json done = f.Stranger(json::array());
    done["status"]["phase"] = "Failed";  // a finished pod keeps nothing
    f.h.api.Put(kube::Pods(), done);
    const ExecuteOutcome out = f.h.Run({f.release});
    CHECK(out.status.ok());
    CHECK(out.writes == 1);
    CHECK(out.replan);  // our own PodGroup is created in the next round
    CHECK_FALSE(f.h.api.Find(PodGroups(), kNs, kPgA));
    const std::vector<std::string> log = f.h.api.log();
    REQUIRE(log.size() == 2);
    CHECK(log[0] == "list pods ml/");
    CHECK(log[1] == "patch podgroups ml/" + kPgA);
  }
  SECTION("a pod of another owner names it: nothing written, a Warning, a look again later") {
    f.h.api.Put(kube::Pods(), f.Stranger());
    const ExecuteOutcome out =
        f.h.Run({f.release, Action::Event("Normal", "PodGroupReleased", "x")});
    CHECK(out.status.ok());
    CHECK_FALSE(out.replan);
    CHECK(out.writes == 0);
    CHECK(out.requeue_after == planner::kTerminatingRecheck);
    CHECK(f.h.api.calls("patch") == 0);
    CHECK(f.h.api.Find(PodGroups(), kNs, kPgA)->at("metadata")["finalizers"].size() == 1);
    CHECK(f.h.EventReasons() == std::vector<std::string>{"PodGroupTerminating"});
    bool said = false;
    for (const json& e : f.h.api.Objects(kube::Events(), kNs)) {
      said = said || e.value("message", "") ==
                         "PodGroup " + kPgA +
                             " does not belong to this Deployment and is being deleted, but pod "
                             "batch-1, which is not this Deployment's, still names it (its "
                             "scheduling.k8s.io/podgroup-protection finalizer waits for every "
                             "pod that names it); wasd leaves it alone, creates no PodGroups and "
                             "lifts no scheduling gates for this Deployment until it is gone";
    }
    CHECK(said);
  }
  SECTION("a pod of the Deployment that is bound names it: nothing written") {
    json bound = WithoutGates(Pod("web-aaaa-3", f.rs));
    bound["spec"]["nodeName"] = "node-1";
    f.h.api.Put(kube::Pods(), bound);
    const ExecuteOutcome out = f.h.Run({f.release});
    CHECK(out.writes == 0);
    CHECK(f.h.api.calls("patch") == 0);
    CHECK(f.h.EventReasons() == std::vector<std::string>{"PodGroupTerminating"});
  }
  SECTION("the list fails: nothing written on a guess") {
    f.h.api.FailNext("list", testing::InternalError("etcd timeout"), "pods");
    const ExecuteOutcome out = f.h.Run({f.release});
    CHECK_FALSE(out.status.ok());
    CHECK(f.h.api.calls("patch") == 0);
    CHECK(f.h.EventReasons().empty());
  }
}

// --- claims stripped (Q11) --------------------------------------------------------

TEST_CASE("executor: claims the API server dropped from a create are reported", "[unit]") {
  Harness h;
  // A server with DRAWorkloadResourceClaims off drops every resourceClaims.
  h.api.set_on_create([](const kube::Resource& r, json& object) {
    if (r.plural == "podgroups") object["spec"].erase("resourceClaims");
    if (r.plural == "workloads") object["spec"]["podGroupTemplates"][0].erase("resourceClaims");
  });
  const json w = StoredWorkload(h.deployment);
  json pg = StoredPodGroup(w, ReplicaSet("aaaa", "rs-a", 3), "unused");
  pg["metadata"].erase("uid");
  pg["metadata"]["ownerReferences"] = json::array();  // no owner to re-read
  pg["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}}, {{"name", "nic"}}});
  json workload = w;
  workload["metadata"].erase("uid");
  workload["metadata"].erase("ownerReferences");
  workload["metadata"]["name"] = "other";
  workload["spec"]["podGroupTemplates"][0]["resourceClaims"] = json::array({{{"name", "gpu"}}});
  const ExecuteOutcome out =
      h.Run({Action::CreatePodGroup(kPgA, pg, 0), Action::CreateWorkload("other", workload, 0)});
  CHECK(out.status.ok());
  CHECK(out.writes == 2);
  CHECK(h.EventReasons() == std::vector<std::string>{"ClaimsStripped", "ClaimsStripped"});
  bool pg_message = false;
  for (const json& e : h.api.Objects(kube::Events(), kNs)) {
    const std::string m = e.value("message", "");
    if (m.rfind("PodGroup " + kPgA + " was stored without its resourceClaims (gpu, nic)", 0) == 0) {
      pg_message = true;
    }
  }
  CHECK(pg_message);
}

TEST_CASE("executor: kept claims raise no Event", "[unit]") {
  Harness h;
  json pg = StoredPodGroup(StoredWorkload(h.deployment), ReplicaSet("aaaa", "rs-a", 3), "unused");
  pg["metadata"]["ownerReferences"] = json::array();
  pg["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}}});
  CHECK(h.Run({Action::CreatePodGroup(kPgA, pg, 0)}).writes == 1);
  CHECK(h.EventReasons().empty());
}

// --- leader check, Events, requeue --------------------------------------------------

TEST_CASE("executor: a replica that may not write stops before the first action", "[unit]") {
  Harness h;
  h.leader = false;
  const ExecuteOutcome out = h.executor.Execute(h.deployment, h.PlanNow());
  CHECK(out.not_leader);
  CHECK(out.writes == 0);
  CHECK(h.api.log().empty());
}

TEST_CASE("executor: losing the Lease mid-plan stops at the next action", "[unit]") {
  Harness h;
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  h.api.Put(kube::Pods(), Pod("web-aaaa-1", rs));
  h.api.Put(kube::Pods(), Pod("web-aaaa-2", rs));
  int asked = 0;
  Executor executor(h.api, h.recent, h.events, h.metrics, h.log, [&asked] { return ++asked < 2; });
  Plan plan;
  plan.actions = {Action::LiftGate("web-aaaa-1", "p-web-aaaa-1", 0),
                  Action::LiftGate("web-aaaa-2", "p-web-aaaa-2", 0)};
  const ExecuteOutcome out = executor.Execute(h.deployment, plan);
  CHECK(out.not_leader);
  CHECK(out.writes == 1);
  CHECK(h.api.calls("patch") == 1);
}

TEST_CASE("executor: Event actions are posted, RequeueAfter is passed on", "[unit]") {
  Harness h;
  const ExecuteOutcome out = h.Run(
      {Action::Event("Warning", "ForeignObject", "someone else's"), Action::RequeueAfter(5s)});
  CHECK(out.status.ok());
  CHECK(out.writes == 0);
  CHECK(out.requeue_after == std::chrono::milliseconds(5000));
  CHECK(h.EventReasons() == std::vector<std::string>{"ForeignObject"});
  const json event = h.api.Objects(kube::Events(), kNs).at(0);
  CHECK(event["involvedObject"]["uid"] == "d-uid-1");
  CHECK(event["type"] == "Warning");
  CHECK(event["reportingInstance"] == "test-replica");
}

// --- backends ----------------------------------------------------------------

TEST_CASE("executor: a Volcano plan writes Volcano PodGroups and nothing native", "[unit]") {
  const workloadbuilder::Backend volcano = workloadbuilder::Backend::kVolcano;
  auto with_label = [](json d) {
    d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "volcano";
    return d;
  };
  Harness h(with_label(Deployment(2)));
  json rs = h.api.Put(kube::ReplicaSets(), ReplicaSet("aaaa", "rs-a", 2));
  for (const std::string name : {"web-aaaa-1", "web-aaaa-2"}) {
    json pod = Pod(name, rs);
    pod["spec"].erase("schedulingGroup");
    pod["metadata"]["labels"]["wasd.io/backend"] = "volcano";
    pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = kPgA;
    h.api.Put(kube::Pods(), pod);
  }
  Plan plan = h.PlanNow();
  REQUIRE(plan.backend == volcano);
  ExecuteOutcome out = h.executor.Execute(h.deployment, plan);
  CHECK(out.status.ok());
  CHECK(out.writes == 3);  // the PodGroup, then one gate lift per pod
  const auto stored = h.api.Find(GroupResource(volcano), kNs, kPgA);
  REQUIRE(stored);
  CHECK((*stored)["apiVersion"] == "scheduling.volcano.sh/v1beta1");
  CHECK((*stored)["spec"]["minMember"] == 2);
  CHECK(h.api.Objects(PodGroups(), kNs).empty());
  CHECK(h.api.Objects(Workloads(), kNs).empty());
  const objects::Object recorded = h.Recent(Kind::kPodGroup, kPgA, nullptr);
  REQUIRE(recorded != nullptr);  // the next plan sees it before the watch does
  CHECK(h.PlanNow().empty());    // and nothing is left to do

  // Scale up: minMember patched on the Volcano object.
  h.deployment = h.api.Put(kube::Deployments(), with_label(Deployment(3)));
  rs["spec"]["replicas"] = 3;
  rs = h.api.Put(kube::ReplicaSets(), rs);
  out = h.executor.Execute(h.deployment, h.PlanNow());
  CHECK(out.writes == 1);
  CHECK(h.api.Find(GroupResource(volcano), kNs, kPgA)->at("spec")["minMember"] == 3);

  // Scale to zero: the live ReplicaSet is read, then the Volcano object deleted.
  h.deployment = h.api.Put(kube::Deployments(), with_label(Deployment(0)));
  rs["spec"]["replicas"] = 0;
  h.api.Put(kube::ReplicaSets(), rs);
  for (const json& pod : h.api.Objects(kube::Pods(), kNs)) {
    h.api.Delete(kube::Pods(), kNs, objects::NameOf(pod), objects::UidOf(pod), "");
  }
  plan = h.PlanNow();
  REQUIRE(plan.backend == volcano);
  out = h.executor.Execute(h.deployment, plan);
  CHECK(out.status.ok());
  CHECK_FALSE(h.api.Find(GroupResource(volcano), kNs, kPgA));
  CHECK(h.api.log().back().rfind("create events", 0) == 0);  // PodGroupDeleted
}

}  // namespace
}  // namespace wasd::reconciler
