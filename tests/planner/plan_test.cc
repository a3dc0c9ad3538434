// The planner against every case of KEP-6276's integration/e2e lists and the
// docs/design.md decisions: observed objects in, ordered actions out.
#include "planner/plan.h"

#include <catch2/catch.hpp>

#include "plan_fixtures.h"

namespace wasd::planner {
namespace {

using namespace testing;  // NOLINT: test fixtures
using V = std::vector<std::string>;

const std::string kRsA = "web-aaaa";
// Q12: PodGroups are named after the ReplicaSet incarnation (name + uid).
const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");
const std::string kPgB = workloadbuilder::PodGroupName("web-bbbb", "rs-b");
const std::string kPgZ = workloadbuilder::PodGroupName("web-zzzz", "rs-z");

PlanInput Input(const json& deployment) {
  PlanInput in;
  in.deployment = Obj(deployment);
  return in;
}

const Action& Find(const Plan& plan, ActionKind kind) {
  for (const Action& a : plan.actions) {
    if (a.kind == kind) return a;
  }
  FAIL("no action " << ActionKindName(kind));
  return plan.actions.front();
}

TEST_CASE("create: a new Deployment gets its Workload first, then a replan", "[unit]") {
  PlanInput in = Input(Deployment(3));
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event WorkloadCreated"});
  CHECK(plan.needs_replan);
  const json& w = plan.actions[0].object;
  CHECK(w["metadata"]["ownerReferences"][0]["uid"] == kDeployUid);
  CHECK(w["metadata"]["ownerReferences"][0]["controller"] == true);
  CHECK(w["spec"]["podGroupTemplates"][0]["name"] == "pgt-0");
  CHECK(w["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 3);
  CHECK(plan.actions[1].event_type == "Normal");
}

TEST_CASE("create: ReplicaSet with gated pods gets its PodGroup before any gate lifts", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-2", rs)), Obj(Pod("web-aaaa-1", rs)), Obj(Pod("web-aaaa-3", rs))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "LiftGate web-aaaa-1",
                           "LiftGate web-aaaa-2", "LiftGate web-aaaa-3"});
  const json& pg = plan.actions[0].object;
  CHECK(pg["metadata"]["name"] == kPgA);
  CHECK(pg["metadata"]["ownerReferences"][0]["uid"] == "rs-a");
  CHECK(pg["metadata"]["ownerReferences"][0]["controller"] == true);
  CHECK(pg["metadata"]["ownerReferences"][1]["uid"] == "w-uid-1");
  CHECK_FALSE(pg["metadata"]["ownerReferences"][1].contains("controller"));
  CHECK(pg["spec"]["workloadRef"] ==
        json{{"workloadName", WorkloadName()}, {"templateName", "pgt-0"}});
  CHECK(pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3);
  // The gate lift removes the gate and nothing else, after testing it.
  CHECK(plan.actions[2].patch == json::parse(R"([
    {"op":"test","path":"/spec/schedulingGates/0/name","value":"wasd.io/pod-group"},
    {"op":"remove","path":"/spec/schedulingGates/0"}])"));
}

TEST_CASE("steady state: nothing to do", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  in.pods = {Obj(Pod("web-aaaa-1", rs, json::array())), Obj(Pod("web-aaaa-2", rs, json::array()))};
  const Plan plan = PlanDeployment(in);
  CHECK(plan.empty());
  CHECK_FALSE(plan.needs_replan);
}

TEST_CASE("scale up: Workload minCount, then the PodGroup's, then the new pods' gates", "[unit]") {
  const json w = StoredWorkload(Deployment(3));
  const json rs = ReplicaSet("aaaa", "rs-a", 5);
  PlanInput in = Input(Deployment(5));
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  in.pods = {Obj(Pod("web-aaaa-1", rs, json::array())), Obj(Pod("web-aaaa-4", rs)),
             Obj(Pod("web-aaaa-5", rs))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(),
                           "PatchPodGroupMinCount " + kPgA, "LiftGate web-aaaa-4",
                           "LiftGate web-aaaa-5"});
  CHECK(plan.actions[0].min_count == 5);
  CHECK(plan.actions[0].patch == json::parse(R"([
    {"op":"test","path":"/metadata/uid","value":"w-uid-1"},
    {"op":"replace","path":"/spec/podGroupTemplates/0/schedulingPolicy/gang/minCount","value":5}])"));
  CHECK(plan.actions[1].min_count == 5);
  CHECK(plan.actions[1].patch == json::parse(R"([
    {"op":"test","path":"/metadata/uid","value":"pg-a"},
    {"op":"replace","path":"/spec/schedulingPolicy/gang/minCount","value":5}])"));
}

TEST_CASE("scale down: both minCounts follow, no gate work", "[unit]") {
  const json w = StoredWorkload(Deployment(5));
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(Deployment(2));
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) ==
        V{"PatchWorkloadMinCount " + WorkloadName(), "PatchPodGroupMinCount " + kPgA});
  CHECK(plan.actions[0].min_count == 2);
  CHECK(plan.actions[1].min_count == 2);
}

TEST_CASE("scale to zero: the PodGroup is deleted, the Workload keeps its minCount", "[unit]") {
  SECTION("derived minCount") {
    const json w = StoredWorkload(Deployment(3));
    const json rs = ReplicaSet("aaaa", "rs-a", 0);
    PlanInput in = Input(Deployment(0));
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted"});
    CHECK(plan.actions[0].uid == "pg-a");
    // Q13: the executor re-reads this ReplicaSet before it deletes.
    CHECK(plan.actions[0].owner_name == kRsA);
    CHECK(plan.actions[0].owner_uid == "rs-a");
    CHECK_FALSE(plan.actions[0].owner_may_be_active);
  }
  SECTION("explicit minCount stays") {
    const json w = StoredWorkload(Deployment(3, 2));
    CHECK(w["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 2);
    PlanInput in = Input(Deployment(0, 2));
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(ReplicaSet("aaaa", "rs-a", 0))};
    CHECK(PlanDeployment(in).empty());
  }
  SECTION("a Workload created at zero gets minCount 1, or the explicit value") {
    Plan plan = PlanDeployment(Input(Deployment(0)));
    CHECK(plan.actions[0]
              .object["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 1);
    plan = PlanDeployment(Input(Deployment(0, 4)));
    CHECK(plan.actions[0]
              .object["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 4);
  }
}

TEST_CASE("back from zero: Workload patched, PodGroup re-created before gates lift", "[unit]") {
  const json w = StoredWorkload(Deployment(5));  // minCount 5 kept at zero
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  auto input = [&](int deployment_replicas) {
    PlanInput in = Input(Deployment(deployment_replicas));
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(Pod("web-aaaa-1", rs)), Obj(Pod("web-aaaa-2", rs))};
    return in;
  };
  SECTION("the Deployment's update is cached") {
    const Plan plan = PlanDeployment(input(2));
    CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "CreatePodGroup " + kPgA,
                             "Event PodGroupCreated", "LiftGate web-aaaa-1",
                             "LiftGate web-aaaa-2"});
    CHECK(plan.actions[1].object["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2);
  }
  SECTION("the ReplicaSet's scale-up is cached first: no PodGroup, look again soon") {
    // A PodGroup created now would carry the minCount kept at zero (5) for
    // a gang of 2.
    const Plan plan = PlanDeployment(input(0));
    CHECK(Summary(plan) == V{"RequeueAfter"});
    CHECK(Find(plan, ActionKind::kRequeueAfter).delay == kStaleDeploymentRecheck);
    CHECK(plan.note.find("waiting for the Deployment's update") != std::string::npos);
  }
}

TEST_CASE("Recreate rollout: old PodGroup released, new one created", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json old_rs = ReplicaSet("aaaa", "rs-a", 0);
  const json new_rs = ReplicaSet("bbbb", "rs-b", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(new_rs), Obj(old_rs)};
  in.podgroups = {Obj(StoredPodGroup(w, old_rs, "pg-a"))};
  in.pods = {Obj(Pod("web-bbbb-1", new_rs))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted",
                           "CreatePodGroup " + kPgB, "Event PodGroupCreated",
                           "LiftGate web-bbbb-1"});

  SECTION("an old pod still terminating keeps the old PodGroup until it is gone") {
    in.pods.push_back(Obj(Terminating(Pod("web-aaaa-1", old_rs, json::array()))));
    CHECK(Summary(PlanDeployment(in)) ==
          V{"CreatePodGroup " + kPgB, "Event PodGroupCreated", "LiftGate web-bbbb-1"});
  }
  SECTION("a finished pod does not") {
    json done = Pod("web-aaaa-1", old_rs, json::array());
    done["status"]["phase"] = "Succeeded";
    in.pods.push_back(Obj(done));
    CHECK(Summary(PlanDeployment(in))[0] == "DeletePodGroup " + kPgA);
  }
}

TEST_CASE("scale to zero: the PodGroup waits for the last pod that names it", "[unit]") {
  const json w = StoredWorkload(Deployment(3));
  const json rs = ReplicaSet("aaaa", "rs-a", 0);
  PlanInput in = Input(Deployment(0));
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  json stray = Pod("other-pod", ReplicaSet("zzzz", "rs-z", 1, "someone"), json::array());
  stray["spec"]["schedulingGroup"]["podGroupName"] = kPgA;  // any pod naming it counts
  in.pods = {Obj(stray)};
  CHECK(PlanDeployment(in).empty());
  in.pods.clear();
  CHECK(Summary(PlanDeployment(in)) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted"});
}

TEST_CASE("rollback: the old ReplicaSet's PodGroup is still Terminating", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs_a = ReplicaSet("aaaa", "rs-a", 3);  // scaled up again
  const json rs_b = ReplicaSet("bbbb", "rs-b", 0);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs_a), Obj(rs_b)};
  in.podgroups = {Obj(Terminating(StoredPodGroup(w, rs_a, "pg-a"))),
                  Obj(StoredPodGroup(w, rs_b, "pg-b"))};
  json running = Pod("web-aaaa-1", rs_a, json::array());
  running["spec"]["nodeName"] = "node-1";
  running["status"]["phase"] = "Running";
  in.pods = {Obj(Pod("web-aaaa-9", rs_a))};

  SECTION("Q14: only never-run gated pods name it: release the finalizer, then re-create") {
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"DeletePodGroup " + kPgB, "Event PodGroupDeleted",
                             "ReleasePodGroup " + kPgA, "Event PodGroupReleased", "RequeueAfter"});
    const Action& release = plan.actions[2];
    CHECK(release.uid == "pg-a");
    CHECK(release.patch == json::parse(R"([
      {"op":"test","path":"/metadata/uid","value":"pg-a"},
      {"op":"test","path":"/metadata/finalizers/0","value":"scheduling.k8s.io/podgroup-protection"},
      {"op":"remove","path":"/metadata/finalizers/0"}])"));
    CHECK(plan.needs_replan);
  }
  SECTION("a pod that is bound (or ran) still names it: wait, with a Warning") {
    in.pods.push_back(Obj(running));
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"DeletePodGroup " + kPgB, "Event PodGroupDeleted",
                             "Event PodGroupTerminating", "RequeueAfter"});
    CHECK(plan.actions[1].event_type == "Normal");
    CHECK(plan.actions[2].event_type == "Warning");
    CHECK(Find(plan, ActionKind::kRequeueAfter).delay == kTerminatingRecheck);
  }
  SECTION("a bound pod whose gate was lifted counts as running") {
    json bound = Pod("web-aaaa-2", rs_a, json::array());
    bound["spec"]["nodeName"] = "node-2";
    in.pods.push_back(Obj(bound));
    CHECK(Summary(PlanDeployment(in))[2] == "Event PodGroupTerminating");
  }
  SECTION("no podgroup-protection finalizer left (held by another): wait") {
    json pg = Terminating(StoredPodGroup(w, rs_a, "pg-a"));
    pg["metadata"]["finalizers"] = json::array({"example.com/keep"});
    in.podgroups = {Obj(pg)};
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"Event PodGroupTerminating", "RequeueAfter"});
    CHECK(plan.actions[0].message.find("wasd does not own") != std::string::npos);
  }
  SECTION("once it is gone, it is re-created and the gates lift") {
    in.podgroups = {Obj(Terminating(StoredPodGroup(w, rs_b, "pg-b")))};
    const Plan next = PlanDeployment(in);
    CHECK(Summary(next) ==
          V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "LiftGate web-aaaa-9"});
  }
}

TEST_CASE("Q12: a ReplicaSet re-created under the same name never names the old PodGroup",
          "[unit]") {
  // Deployment deleted and re-created with the same template (H2), or a
  // rollback to a pruned revision: the same ReplicaSet name, a new UID.
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json vanished = ReplicaSet("aaaa", "rs-a-old", 3);
  const json reborn = ReplicaSet("aaaa", "rs-a-new", 3);
  const std::string old_pg = workloadbuilder::PodGroupName("web-aaaa", "rs-a-old");
  const std::string new_pg = workloadbuilder::PodGroupName("web-aaaa", "rs-a-new");
  REQUIRE(old_pg != new_pg);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(reborn)};
  in.podgroups = {Obj(Terminating(StoredPodGroup(w, vanished, "pg-old")))};
  json old_pod = Pod("web-aaaa-old", vanished, json::array());
  old_pod["spec"]["nodeName"] = "node-1";
  in.pods = {Obj(Pod("web-aaaa-1", reborn)), Obj(old_pod)};
  // The old one stays Terminating behind its running pod; the new pods get
  // their own PodGroup at once.
  CHECK(Summary(PlanDeployment(in)) ==
        V{"CreatePodGroup " + new_pg, "Event PodGroupCreated", "LiftGate web-aaaa-1"});

  SECTION("an old PodGroup not yet deleted goes once its pods are gone") {
    in.podgroups = {Obj(StoredPodGroup(w, vanished, "pg-old"))};
    in.pods = {Obj(Pod("web-aaaa-1", reborn))};
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"DeletePodGroup " + old_pg, "Event PodGroupDeleted",
                             "CreatePodGroup " + new_pg, "Event PodGroupCreated",
                             "LiftGate web-aaaa-1"});
    CHECK(plan.actions[0].owner_name == "web-aaaa");
    CHECK(plan.actions[0].owner_uid == "rs-a-old");
  }
}

TEST_CASE("Q12 upgrade: a PodGroup of the earlier naming scheme is replaced once unused",
          "[unit]") {
  const json d = Deployment(2);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  json legacy = StoredPodGroup(w, rs, "pg-legacy");
  legacy["metadata"]["name"] = kRsA;
  json legacy_pod = Pod("web-aaaa-1", rs, json::array());
  legacy_pod["spec"]["schedulingGroup"]["podGroupName"] = kRsA;
  legacy_pod["status"]["phase"] = "Running";
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(legacy)};
  in.pods = {Obj(legacy_pod), Obj(Pod("web-aaaa-2", rs))};
  CHECK(Summary(PlanDeployment(in)) ==
        V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "LiftGate web-aaaa-2"});
  in.pods = {Obj(Pod("web-aaaa-2", rs, json::array()))};
  in.podgroups = {Obj(legacy), Obj(StoredPodGroup(w, rs, "pg-a"))};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"DeletePodGroup " + kRsA, "Event PodGroupDeleted"});
  CHECK(plan.actions[0].owner_may_be_active);  // its ReplicaSet lives on, under the new name
  CHECK(plan.actions[0].resource_version.empty());
}

TEST_CASE("deleted PodGroup is re-created; running pods are not touched", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs, json::array()))};
  CHECK(Summary(PlanDeployment(in)) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated"});
}

TEST_CASE("single-pod replacement keeps the PodGroup and only lifts the new pod", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  in.pods = {Obj(Pod("web-aaaa-1", rs, json::array())), Obj(Pod("web-aaaa-new", rs))};
  CHECK(Summary(PlanDeployment(in)) == V{"LiftGate web-aaaa-new"});
}

TEST_CASE("re-created Workload: PodGroups get their Workload reference re-pointed", "[unit]") {
  const json d = Deployment(3);
  const json old_w = StoredWorkload(d, "w-uid-old");
  const json new_w = StoredWorkload(d, "w-uid-new");
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(new_w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(old_w, rs, "pg-a"))};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupOwners " + kPgA});
  CHECK(plan.actions[0].patch == json::parse(R"([
    {"op":"test","path":"/metadata/uid","value":"pg-a"},
    {"op":"test","path":"/metadata/ownerReferences/1/kind","value":"Workload"},
    {"op":"test","path":"/metadata/ownerReferences/1/uid","value":"w-uid-old"},
    {"op":"replace","path":"/metadata/ownerReferences/1",
     "value":{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"Workload","name":")" +
                                             WorkloadName() + R"(","uid":"w-uid-new"}}])"));

  SECTION("a PodGroup without any Workload reference gets one appended") {
    json pg = StoredPodGroup(new_w, rs, "pg-a");
    pg["metadata"]["ownerReferences"].erase(1);
    in.podgroups = {Obj(pg)};
    const Plan p = PlanDeployment(in);
    REQUIRE(Summary(p) == V{"PatchPodGroupOwners " + kPgA});
    CHECK(p.actions[0].patch[1]["op"] == "add");
    CHECK(p.actions[0].patch[1]["path"] == "/metadata/ownerReferences/-");
    CHECK(p.actions[0].patch[1]["value"]["uid"] == "w-uid-new");
  }
}

TEST_CASE("foreign Workload with our name: an Event and nothing else", "[unit]") {
  const json d = Deployment(3);
  json foreign = StoredWorkload(d, "w-foreign");
  foreign["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
  foreign["metadata"]["ownerReferences"][0]["name"] = "other";
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(foreign)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs))};
  Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"Event ForeignObject"});
  CHECK(plan.actions[0].event_type == "Warning");
  CHECK(plan.actions[0].message.find("Deployment other") != std::string::npos);

  SECTION("an unowned object with our name is foreign too") {
    foreign["metadata"].erase("ownerReferences");
    in.workloads = {Obj(foreign)};
    plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"Event ForeignObject"});
    CHECK(plan.actions[0].message.find("no controller") != std::string::npos);
  }
  SECTION("a Workload the Deployment controls under another name is not ours") {
    // Anyone who may create Workloads can point a controller reference at
    // the Deployment; ours is the generated name with that controller.
    json other = StoredWorkload(d, "w-other");
    other["metadata"]["name"] = "renamed";
    in.workloads = {Obj(other)};
    plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event WorkloadCreated"});
  }
}

TEST_CASE("foreign PodGroup with a needed name: no PodGroup writes, no gate lifts", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs_a = ReplicaSet("aaaa", "rs-a", 3);
  const json rs_b = ReplicaSet("bbbb", "rs-b", 3, "other-deploy");  // not ours: ignored
  json foreign = {{"metadata", {{"name", kPgA}, {"namespace", kNs}, {"uid", "pg-x"}}},
                  {"spec", {{"schedulingPolicy", {{"basic", json::object()}}}}}};
  PlanInput in = Input(Deployment(5));  // would also need a Workload patch
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs_a), Obj(rs_b)};
  in.podgroups = {Obj(foreign)};
  in.pods = {Obj(Pod("web-aaaa-1", rs_a))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "Event ForeignObject"});
}

TEST_CASE("foreign PodGroup being deleted: released when only our never-run pods hold it",
          "[unit]") {
  // The ForeignObject Event's advice taken: the foreign PodGroup is deleted, and
  // podgroup-protection keeps it while pods name it — wasd's gated pods, forever.
  const json d = Deployment(2);
  const json w = StoredWorkload(d);
  const json rs_a = ReplicaSet("aaaa", "rs-a", 2);
  json foreign = {{"metadata",
                   {{"name", kPgA},
                    {"namespace", kNs},
                    {"uid", "pg-x"},
                    {"finalizers", json::array({"scheduling.k8s.io/podgroup-protection"})}}},
                  {"spec", {{"schedulingPolicy", {{"basic", json::object()}}}}}};
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs_a)};
  in.podgroups = {Obj(Terminating(foreign))};
  in.pods = {Obj(Pod("web-aaaa-1", rs_a)), Obj(Pod("web-aaaa-2", rs_a))};

  SECTION("only our never-run gated pods name it: release, plan again, no gate lifted") {
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"ReleasePodGroup " + kPgA, "Event PodGroupReleased"});
    const Action& release = plan.actions[0];
    CHECK(release.foreign);
    CHECK(release.uid == "pg-x");
    CHECK(release.owner_uids == V{"rs-a"});
    CHECK(release.patch == json::parse(R"([
      {"op":"test","path":"/metadata/uid","value":"pg-x"},
      {"op":"test","path":"/metadata/finalizers/0","value":"scheduling.k8s.io/podgroup-protection"},
      {"op":"remove","path":"/metadata/finalizers/0"}])"));
    CHECK(plan.actions[1].event_type == "Warning");  // L2: a write to someone else's object
    CHECK(plan.actions[1].message ==
          "PodGroup " + kPgA +
              " is someone else's (it has no controller) and is being deleted, and only pods of "
              "this Deployment that never ran (never scheduled) name it: "
              "removed its scheduling.k8s.io/podgroup-protection finalizer so that it can go; "
              "wasd then creates its own PodGroup for ReplicaSet web-aaaa");
    CHECK(plan.needs_replan);
  }
  SECTION("once it is gone: our PodGroup, and the gates lift") {
    in.podgroups.clear();
    CHECK(Summary(PlanDeployment(in)) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated",
                                           "LiftGate web-aaaa-1", "LiftGate web-aaaa-2"});
  }
  SECTION("a pod that ran still names it: wait, with a Warning") {
    json ran = Pod("web-aaaa-3", rs_a, json::array());
    ran["spec"]["nodeName"] = "node-1";
    ran["status"]["phase"] = "Running";
    in.pods.push_back(Obj(ran));
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"Event PodGroupTerminating", "RequeueAfter"});
    CHECK(plan.actions[0].event_type == "Warning");
    CHECK(plan.actions[0].message ==
          "PodGroup " + kPgA +
              " does not belong to this Deployment (it has no controller) and is being deleted, "
              "but pod web-aaaa-3, which is bound or ran, still names it (its "
              "scheduling.k8s.io/podgroup-protection finalizer waits for every pod that names "
              "it); wasd leaves it alone, creates no PodGroups and lifts no scheduling gates for "
              "this Deployment until it is gone. Meanwhile: 2 pod(s) stay gated by wasd "
              "(scheduling gate wasd.io/pod-group)");
    CHECK(Find(plan, ActionKind::kRequeueAfter).delay == kTerminatingRecheck);
    CHECK_FALSE(plan.needs_replan);
  }
  SECTION("an ungated pod of ours that was never scheduled (scheduler hold) never ran") {
    in.pods.push_back(Obj(Pod("web-aaaa-3", rs_a, json::array())));
    CHECK(Summary(PlanDeployment(in)) == V{"ReleasePodGroup " + kPgA, "Event PodGroupReleased"});
    json scheduled = Pod("web-aaaa-3", rs_a, json::array());
    scheduled["status"]["conditions"] =
        json::array({{{"type", "PodScheduled"}, {"status", "True"}}});
    in.pods.back() = Obj(scheduled);
    CHECK(Summary(PlanDeployment(in)) == V{"Event PodGroupTerminating", "RequeueAfter"});
  }
  SECTION("a never-run pod of another owner names it: wait") {
    const json theirs = ReplicaSet("zzzz", "rs-z", 1, "someone");
    json pod = Pod("batch-1", theirs);
    pod["spec"]["schedulingGroup"]["podGroupName"] = kPgA;
    in.pods.push_back(Obj(pod));
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"Event PodGroupTerminating", "RequeueAfter"});
    CHECK_THAT(plan.actions[0].message,
               Catch::Contains("pod batch-1, which is not this Deployment's, still names it"));
  }
  SECTION("a finished pod of another owner does not hold it") {
    const json theirs = ReplicaSet("zzzz", "rs-z", 1, "someone");
    json pod = Pod("batch-1", theirs, json::array());
    pod["spec"]["schedulingGroup"]["podGroupName"] = kPgA;
    pod["status"]["phase"] = "Succeeded";
    in.pods.push_back(Obj(pod));
    CHECK(Summary(PlanDeployment(in))[0] == "ReleasePodGroup " + kPgA);
  }
  SECTION("another finalizer holds it too: wasd touches nothing") {
    foreign["metadata"]["finalizers"].push_back("example.com/keep");
    in.podgroups = {Obj(Terminating(foreign))};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"Event PodGroupTerminating", "RequeueAfter"});
    CHECK_THAT(plan.actions[0].message,
               Catch::Contains("but finalizers wasd does not own hold it (example.com/keep)"));
  }
  SECTION("no pod names it: kube's controller releases it, wasd waits") {
    in.pods.clear();
    CHECK(Summary(PlanDeployment(in)) == V{"Event PodGroupTerminating", "RequeueAfter"});
  }
  SECTION("owned by another controller: released all the same, and the Event says whose") {
    foreign["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                           {"kind", "Job"},
                                                           {"name", "x"},
                                                           {"uid", "j-1"},
                                                           {"controller", true}}});
    in.podgroups = {Obj(Terminating(foreign))};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"ReleasePodGroup " + kPgA, "Event PodGroupReleased"});
    CHECK_THAT(plan.actions[1].message, Catch::Contains("is someone else's (controller: Job x)"));
  }
  SECTION("not being deleted: ForeignObject as before, nothing written") {
    in.podgroups = {Obj(foreign)};
    CHECK(Summary(PlanDeployment(in)) == V{"Event ForeignObject"});
  }
}

TEST_CASE("crash between Workload and PodGroup creation: recovery creates only what is missing",
          "[unit]") {
  const json d = Deployment(2);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs)), Obj(Pod("web-aaaa-2", rs))};
  Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "LiftGate web-aaaa-1",
                           "LiftGate web-aaaa-2"});
  // Crash after the PodGroup and one gate: the rest only.
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  in.pods = {Obj(Pod("web-aaaa-1", rs, json::array())), Obj(Pod("web-aaaa-2", rs))};
  plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"LiftGate web-aaaa-2"});
}

TEST_CASE("PodGroup of a vanished ReplicaSet is deleted", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  const json gone = ReplicaSet("zzzz", "rs-z", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a")), Obj(StoredPodGroup(w, gone, "pg-z"))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"DeletePodGroup " + kPgZ, "Event PodGroupDeleted"});
  CHECK(plan.actions[0].uid == "pg-z");
  CHECK(plan.actions[1].message.find("no longer exists") != std::string::npos);

  SECTION("already Terminating: left alone") {
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a")),
                    Obj(Terminating(StoredPodGroup(w, gone, "pg-z")))};
    CHECK(PlanDeployment(in).empty());
  }
  SECTION("a Terminating ReplicaSet counts as gone") {
    in.replicasets = {Obj(Terminating(rs))};
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
    CHECK(Summary(PlanDeployment(in)) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted"});
  }
}

TEST_CASE("gates: other gates untouched, terminating pods and other ReplicaSets skipped",
          "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  const json other = ReplicaSet("cccc", "rs-c", 3, "other-deploy");
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  in.pods = {
      Obj(Pod("a-1", rs, json::parse(R"([{"name":"other.io/x"},{"name":"wasd.io/pod-group"}])"))),
      Obj(Pod("a-2", rs, json::parse(R"([{"name":"other.io/x"}])"))),
      Obj(Terminating(Pod("a-3", rs))), Obj(Pod("c-1", other))};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"LiftGate a-1"});
  CHECK(plan.actions[0].gate_index == 1);
  CHECK(plan.actions[0].patch[0]["path"] == "/spec/schedulingGates/1/name");
  CHECK(plan.actions[0].patch[1] == json{{"op", "remove"}, {"path", "/spec/schedulingGates/1"}});
}

TEST_CASE("basic policy: no minCount anywhere", "[unit]") {
  const json d = Deployment(3, -1, /*gang=*/false);
  Plan plan = PlanDeployment(Input(d));
  REQUIRE(plan.actions.size() == 2);
  CHECK(plan.actions[0].object["spec"]["podGroupTemplates"][0]["schedulingPolicy"] ==
        json{{"basic", json::object()}});
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 4);
  PlanInput in = Input(Deployment(4, -1, false));
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  CHECK(PlanDeployment(in).empty());
}

TEST_CASE("explicit minCount change at positive replicas is patched", "[unit]") {
  const json w = StoredWorkload(Deployment(4, 2));
  const json rs = ReplicaSet("aaaa", "rs-a", 4);
  PlanInput in = Input(Deployment(4, 3));
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) ==
        V{"PatchWorkloadMinCount " + WorkloadName(), "PatchPodGroupMinCount " + kPgA});
  CHECK(plan.actions[0].min_count == 3);
  CHECK(plan.actions[1].min_count == 3);
}

TEST_CASE("Q10: priorityClassName only for a known class with value <= 1e9", "[unit]") {
  json d = Deployment(2);
  d["spec"]["template"]["spec"]["priorityClassName"] = "high";
  PlanInput in = Input(d);
  SECTION("known and low enough") {
    in.priority_classes = {{"high", 1000}};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event WorkloadCreated"});
    CHECK(plan.actions[0].object["spec"]["podGroupTemplates"][0]["priorityClassName"] == "high");
    CHECK_FALSE(plan.actions[0].object["spec"]["podGroupTemplates"][0].contains("priority"));
  }
  SECTION("too high") {
    in.priority_classes = {{"high", 2'000'000'000}};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event PriorityClassSkipped",
                               "Event WorkloadCreated"});
    CHECK(plan.actions[1].event_type == "Warning");
    CHECK_FALSE(
        plan.actions[0].object["spec"]["podGroupTemplates"][0].contains("priorityClassName"));
  }
  SECTION("unknown") {
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event PriorityClassSkipped",
                               "Event WorkloadCreated"});
    CHECK(plan.actions[1].message.find("not found") != std::string::npos);
  }
}

TEST_CASE("nothing is planned for deployments wasd must not touch", "[unit]") {
  SECTION("gone") { CHECK(PlanDeployment(PlanInput{}).empty()); }
  SECTION("being deleted") { CHECK(PlanDeployment(Input(Terminating(Deployment(3)))).empty()); }
  SECTION("no carrier, no gated pods") {
    json d = Deployment(3);
    d["metadata"].erase("annotations");
    CHECK(PlanDeployment(Input(d)).empty());
  }
  SECTION("our Workload is being deleted: wait") {
    const json d = Deployment(3);
    PlanInput in = Input(d);
    in.workloads = {Obj(Terminating(StoredWorkload(d)))};
    CHECK(Summary(PlanDeployment(in)) == V{"RequeueAfter"});
  }
}

TEST_CASE("Q15: gated pods of a Deployment without a usable carrier are released", "[unit]") {
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  const json other = ReplicaSet("cccc", "rs-c", 1, "other-deploy");
  SECTION("no carrier: lift, with a Warning") {
    json d = Deployment(2);
    d["metadata"].erase("annotations");
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs), Obj(other)};
    in.pods = {Obj(Pod("web-aaaa-1", rs)), Obj(Pod("web-aaaa-2", rs, json::array())),
               Obj(Pod("c-1", other))};
    Plan plan = PlanDeployment(in);
    // M1: the pods name PodGroup kPgA; no scheduler places a pod whose group
    // does not exist, so a basic one (no gang, no Workload) comes first.
    REQUIRE(Summary(plan) ==
            V{"CreatePodGroup " + kPgA, "LiftGate web-aaaa-1", "Event SchedulingGatesLifted"});
    const json& pg = plan.actions[0].object;
    CHECK(pg["apiVersion"] == "scheduling.k8s.io/v1beta1");
    CHECK(pg["spec"] == json::parse(R"({"schedulingPolicy":{"basic":{}}})"));
    REQUIRE(pg["metadata"]["ownerReferences"].size() == 1);
    CHECK(pg["metadata"]["ownerReferences"][0]["uid"] == "rs-a");
    CHECK(pg["metadata"]["ownerReferences"][0]["controller"] == true);
    CHECK(pg["metadata"]["namespace"] == kNs);
    const std::string& message = plan.actions[2].message;
    CHECK(plan.actions[2].event_type == "Warning");
    CHECK(message.find("gate of 1 pod(s)") != std::string::npos);
    CHECK(message.find("1 pod(s) carry no gate and are held by their scheduler") !=
          std::string::npos);
    CHECK(message.find("created PodGroup " + kPgA + " without a gang") != std::string::npos);
    CHECK(message.find("scheduled without a PodGroup") == std::string::npos);
    // The group exists already: only the lift.
    in.podgroups = {Obj(pg)};
    plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"LiftGate web-aaaa-1", "Event SchedulingGatesLifted"});
    CHECK(plan.actions[1].message.find("created") == std::string::npos);
  }
  SECTION("no carrier, a backend: the backend's group with minMember 1") {
    json d = Deployment(2);
    d["metadata"].erase("annotations");
    d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "kai";
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    json pod = Pod("web-aaaa-1", rs);
    pod["spec"].erase("schedulingGroup");
    pod["metadata"]["labels"]["wasd.io/backend"] = "kai";
    pod["metadata"]["annotations"]["pod-group-name"] = kPgA;
    in.pods = {Obj(pod)};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) ==
            V{"CreatePodGroup " + kPgA, "LiftGate web-aaaa-1", "Event SchedulingGatesLifted"});
    CHECK(plan.backend == workloadbuilder::Backend::kKai);
    CHECK(plan.actions[0].object["apiVersion"] == "scheduling.run.ai/v2alpha2");
    CHECK(plan.actions[0].object["spec"]["minMember"] == 1);
    CHECK(plan.actions[2].message.find("scheduling.run.ai PodGroup " + kPgA) != std::string::npos);
  }
  SECTION("a backend label that names no backend: lifted, and the Event says what to do") {
    json d = Deployment(2);
    d["metadata"].erase("annotations");
    d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "bogus";
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(Pod("web-aaaa-1", rs))};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"LiftGate web-aaaa-1", "Event SchedulingGatesLifted"});
    CHECK(plan.actions[1].message.find("delete those pods") != std::string::npos);
  }
  SECTION("invalid stored configuration: a Warning always, lifts when pods wait") {
    json d = Deployment(3);
    d["metadata"]["annotations"]["wasd.io/scheduling"] =
        R"({"schedulingPolicy":{"gang":{"minCount":0}}})";
    Plan plan = PlanDeployment(Input(d));
    REQUIRE(Summary(plan) == V{"Event InvalidSchedulingConfiguration"});
    CHECK(plan.actions[0].event_type == "Warning");
    CHECK(plan.note.find("minCount") != std::string::npos);
    CHECK(plan.actions[0].message.find("minCount") != std::string::npos);
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(Pod("web-aaaa-1", rs))};
    plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"CreatePodGroup " + kPgA, "LiftGate web-aaaa-1",
                             "Event InvalidSchedulingConfiguration"});
    CHECK(plan.actions[2].message.find("created PodGroup " + kPgA) != std::string::npos);
  }
}

TEST_CASE("Q11: claims the stored Workload lacks are reported with each PodGroup create",
          "[unit]") {
  json d = Deployment(2);
  d["metadata"]["annotations"]["wasd.io/scheduling"] =
      R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"gpus","resourceClaimName":"shared"}]})";
  json w = StoredWorkload(d);
  REQUIRE(w["spec"]["podGroupTemplates"][0].contains("resourceClaims"));
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.replicasets = {Obj(rs)};
  in.workloads = {Obj(w)};
  CHECK(Summary(PlanDeployment(in)) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated"});
  w["spec"]["podGroupTemplates"][0].erase("resourceClaims");  // stripped by the API server
  in.workloads = {Obj(w)};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) ==
          V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "Event ClaimsStripped"});
  CHECK(plan.actions[2].event_type == "Warning");
  CHECK(plan.actions[2].message.find("gpus") != std::string::npos);
}

TEST_CASE("Q11: stripped claims are the sent names missing from the answer", "[unit]") {
  const json sent = json::parse(R"({"spec":{"resourceClaims":[{"name":"a"},{"name":"b"}]}})");
  CHECK(StrippedClaims(sent, json::parse(R"({"spec":{}})")) == std::vector<std::string>{"a", "b"});
  CHECK(StrippedClaims(sent, json::parse(R"({"spec":{"resourceClaims":[{"name":"b"}]}})")) ==
        std::vector<std::string>{"a"});
  CHECK(StrippedClaims(sent, sent).empty());
  CHECK(StrippedClaims(json::parse(R"({"spec":{}})"), json::object()).empty());
}

}  // namespace
}  // namespace wasd::planner
