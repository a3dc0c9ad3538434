// The planner against every case of KEP-6276's integration/e2e lists and the
// DESIGN.md decisions: observed objects in, ordered actions out.
#include <catch2/catch.hpp>

#include "plan_fixtures.h"
#include "reconciler/plan.h"

namespace wasd::reconciler {
namespace {

using namespace testing;  // NOLINT: test fixtures
using V = std::vector<std::string>;

const std::string kRsA = "web-aaaa";
const std::string kRsB = "web-bbbb";

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
  CHECK(Summary(plan) == V{"CreatePodGroup web-aaaa", "Event PodGroupCreated", "LiftGate web-aaaa-1",
                           "LiftGate web-aaaa-2", "LiftGate web-aaaa-3"});
  const json& pg = plan.actions[0].object;
  CHECK(pg["metadata"]["name"] == kRsA);
  CHECK(pg["metadata"]["ownerReferences"][0]["uid"] == "rs-a");
  CHECK(pg["metadata"]["ownerReferences"][0]["controller"] == true);
  CHECK(pg["metadata"]["ownerReferences"][1]["uid"] == "w-uid-1");
  CHECK_FALSE(pg["metadata"]["ownerReferences"][1].contains("controller"));
  CHECK(pg["spec"]["workloadRef"] == json{{"workloadName", WorkloadName()}, {"templateName", "pgt-0"}});
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
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "PatchPodGroupMinCount web-aaaa",
                           "LiftGate web-aaaa-4", "LiftGate web-aaaa-5"});
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
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "PatchPodGroupMinCount web-aaaa"});
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
    CHECK(Summary(plan) == V{"DeletePodGroup web-aaaa", "Event PodGroupDeleted"});
    CHECK(plan.actions[0].uid == "pg-a");
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
    CHECK(plan.actions[0].object["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 1);
    plan = PlanDeployment(Input(Deployment(0, 4)));
    CHECK(plan.actions[0].object["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 4);
  }
}

TEST_CASE("back from zero: Workload patched, PodGroup re-created before gates lift", "[unit]") {
  const json w = StoredWorkload(Deployment(5));  // minCount 5 kept at zero
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(Deployment(2));
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs)), Obj(Pod("web-aaaa-2", rs))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "CreatePodGroup web-aaaa",
                           "Event PodGroupCreated", "LiftGate web-aaaa-1", "LiftGate web-aaaa-2"});
  CHECK(plan.actions[1].object["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2);
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
  CHECK(Summary(plan) == V{"DeletePodGroup web-aaaa", "Event PodGroupDeleted", "CreatePodGroup web-bbbb",
                           "Event PodGroupCreated", "LiftGate web-bbbb-1"});

  SECTION("an old pod still terminating keeps the old PodGroup until it is gone") {
    in.pods.push_back(Obj(Terminating(Pod("web-aaaa-1", old_rs, json::array()))));
    CHECK(Summary(PlanDeployment(in)) == V{"CreatePodGroup web-bbbb", "Event PodGroupCreated",
                                           "LiftGate web-bbbb-1"});
  }
  SECTION("a finished pod does not") {
    json done = Pod("web-aaaa-1", old_rs, json::array());
    done["status"]["phase"] = "Succeeded";
    in.pods.push_back(Obj(done));
    CHECK(Summary(PlanDeployment(in))[0] == "DeletePodGroup web-aaaa");
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
  stray["spec"]["schedulingGroup"]["podGroupName"] = kRsA;  // any pod naming it counts
  in.pods = {Obj(stray)};
  CHECK(PlanDeployment(in).empty());
  in.pods.clear();
  CHECK(Summary(PlanDeployment(in)) == V{"DeletePodGroup web-aaaa", "Event PodGroupDeleted"});
}

TEST_CASE("rollback: the old ReplicaSet's PodGroup is still Terminating → wait", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs_a = ReplicaSet("aaaa", "rs-a", 3);  // scaled up again
  const json rs_b = ReplicaSet("bbbb", "rs-b", 0);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs_a), Obj(rs_b)};
  in.podgroups = {Obj(Terminating(StoredPodGroup(w, rs_a, "pg-a"))),
                  Obj(StoredPodGroup(w, rs_b, "pg-b"))};
  in.pods = {Obj(Pod("web-aaaa-9", rs_a))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"DeletePodGroup web-bbbb", "Event PodGroupDeleted", "Event PodGroupTerminating",
                           "RequeueAfter"});
  CHECK(Find(plan, ActionKind::kEvent).event_type == "Normal");
  CHECK(plan.actions[2].event_type == "Warning");
  CHECK(Find(plan, ActionKind::kRequeueAfter).delay == kTerminatingRecheck);

  SECTION("once it is gone, it is re-created and the gates lift") {
    in.podgroups = {Obj(Terminating(StoredPodGroup(w, rs_b, "pg-b")))};
    const Plan next = PlanDeployment(in);
    CHECK(Summary(next) == V{"CreatePodGroup web-aaaa", "Event PodGroupCreated", "LiftGate web-aaaa-9"});
  }
}

TEST_CASE("rollback to a pruned revision: the same name with a new ReplicaSet UID", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json vanished = ReplicaSet("aaaa", "rs-a-old", 3);
  const json reborn = ReplicaSet("aaaa", "rs-a-new", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(reborn)};
  in.podgroups = {Obj(StoredPodGroup(w, vanished, "pg-old"))};
  in.pods = {Obj(Pod("web-aaaa-1", reborn))};
  const Plan plan = PlanDeployment(in);
  // The new ReplicaSet adopts it (its pods already name it), then the gates lift.
  REQUIRE(Summary(plan) == V{"PatchPodGroupOwners web-aaaa", "LiftGate web-aaaa-1"});
  CHECK(plan.actions[0].uid == "pg-old");
  CHECK(plan.actions[0].patch == json::parse(R"([
    {"op":"test","path":"/metadata/uid","value":"pg-old"},
    {"op":"test","path":"/metadata/ownerReferences/0/uid","value":"rs-a-old"},
    {"op":"replace","path":"/metadata/ownerReferences/0","value":{"apiVersion":"apps/v1",
     "kind":"ReplicaSet","name":"web-aaaa","uid":"rs-a-new","controller":true,"blockOwnerDeletion":true}}])"));

  SECTION("already Terminating: wait for it") {
    in.podgroups = {Obj(Terminating(StoredPodGroup(w, vanished, "pg-old")))};
    CHECK(Summary(PlanDeployment(in)) == V{"Event PodGroupTerminating", "RequeueAfter"});
  }
}

TEST_CASE("deleted PodGroup is re-created; running pods are not touched", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs, json::array()))};
  CHECK(Summary(PlanDeployment(in)) == V{"CreatePodGroup web-aaaa", "Event PodGroupCreated"});
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
  REQUIRE(Summary(plan) == V{"PatchPodGroupOwners web-aaaa"});
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
    REQUIRE(Summary(p) == V{"PatchPodGroupOwners web-aaaa"});
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
  SECTION("a Workload we control under another name is ours (found by UID)") {
    json ours = StoredWorkload(d, "w-ours");
    ours["metadata"]["name"] = "renamed";
    in.workloads = {Obj(ours)};
    plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"CreatePodGroup web-aaaa", "Event PodGroupCreated", "LiftGate web-aaaa-1"});
    CHECK(plan.actions[0].object["spec"]["workloadRef"]["workloadName"] == "renamed");
  }
}

TEST_CASE("foreign PodGroup with a ReplicaSet's name: no PodGroup writes, no gate lifts", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs_a = ReplicaSet("aaaa", "rs-a", 3);
  const json rs_b = ReplicaSet("bbbb", "rs-b", 3, "other-deploy");  // not ours: ignored
  json foreign = {{"metadata", {{"name", kRsA}, {"namespace", kNs}, {"uid", "pg-x"}}},
                  {"spec", {{"schedulingPolicy", {{"basic", json::object()}}}}}};
  PlanInput in = Input(Deployment(5));  // would also need a Workload patch
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs_a), Obj(rs_b)};
  in.podgroups = {Obj(foreign)};
  in.pods = {Obj(Pod("web-aaaa-1", rs_a))};
  const Plan plan = PlanDeployment(in);
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "Event ForeignObject"});
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
  CHECK(Summary(plan) == V{"CreatePodGroup web-aaaa", "Event PodGroupCreated", "LiftGate web-aaaa-1",
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
  CHECK(Summary(plan) == V{"DeletePodGroup web-zzzz", "Event PodGroupDeleted"});
  CHECK(plan.actions[0].uid == "pg-z");
  CHECK(plan.actions[1].message.find("no longer exists") != std::string::npos);

  SECTION("already Terminating: left alone") {
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a")), Obj(Terminating(StoredPodGroup(w, gone, "pg-z")))};
    CHECK(PlanDeployment(in).empty());
  }
  SECTION("a Terminating ReplicaSet counts as gone") {
    in.replicasets = {Obj(Terminating(rs))};
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
    CHECK(Summary(PlanDeployment(in)) == V{"DeletePodGroup web-aaaa", "Event PodGroupDeleted"});
  }
}

TEST_CASE("gates: other gates untouched, terminating pods and other ReplicaSets skipped", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  const json other = ReplicaSet("cccc", "rs-c", 3, "other-deploy");
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
  in.pods = {Obj(Pod("a-1", rs, json::parse(R"([{"name":"other.io/x"},{"name":"wasd.io/pod-group"}])"))),
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
  CHECK(Summary(plan) == V{"PatchWorkloadMinCount " + WorkloadName(), "PatchPodGroupMinCount web-aaaa"});
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
    CHECK_FALSE(plan.actions[0].object["spec"]["podGroupTemplates"][0].contains("priorityClassName"));
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
  SECTION("no carrier") {
    json d = Deployment(3);
    d["metadata"].erase("annotations");
    CHECK(PlanDeployment(Input(d)).empty());
  }
  SECTION("invalid configuration") {
    json d = Deployment(3);
    d["metadata"]["annotations"]["wasd.io/scheduling"] = R"({"schedulingPolicy":{"gang":{"minCount":0}}})";
    const Plan plan = PlanDeployment(Input(d));
    CHECK(plan.empty());
    CHECK(plan.note.find("minCount") != std::string::npos);
  }
  SECTION("our Workload is being deleted: wait") {
    const json d = Deployment(3);
    PlanInput in = Input(d);
    in.workloads = {Obj(Terminating(StoredWorkload(d)))};
    CHECK(Summary(PlanDeployment(in)) == V{"RequeueAfter"});
  }
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
}  // namespace wasd::reconciler
