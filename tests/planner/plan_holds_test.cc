// The planner under both holds (docs/design.md Q23): releases act on the pods
// that name a group, gated or not (H1); a gated native pod that lost its link
// keeps its gate (M1); Q14 recognises "never ran" without the gate (M2); the
// Workload reference follows the version in use (L5). Each case here failed
// on 8a67bc2.
#include <catch2/catch.hpp>

#include "plan_fixtures.h"
#include "planner/plan.h"

namespace wasd::planner {
namespace {

using nlohmann::json;
using testing::Deployment;
using testing::Obj;
using testing::Pod;
using testing::ReplicaSet;
using testing::StoredPodGroup;
using testing::StoredWorkload;
using testing::Summary;
using testing::Terminating;
using V = std::vector<std::string>;

const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");

PlanInput Input(const json& deployment) {
  PlanInput in;
  in.deployment = Obj(deployment);
  return in;
}

// A pod of `rs` as the default scheduler hold leaves it: linked, no gate.
json HeldPod(const std::string& name, const json& rs) { return Pod(name, rs, json::array()); }

const Action* FindEvent(const Plan& plan, std::string_view reason) {
  for (const Action& a : plan.actions) {
    if (a.kind == ActionKind::kEvent && a.reason == reason) return &a;
  }
  return nullptr;
}

bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("H1: invalid stored configuration, scheduler hold: the release group is created",
          "[unit]") {
  json d = Deployment(2);
  d["metadata"]["annotations"]["wasd.io/scheduling"] =
      R"({"schedulingPolicy":{"gang":{"minCount":0}}})";
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(HeldPod("web-aaaa-1", rs)), Obj(HeldPod("web-aaaa-2", rs))};
  const Plan plan = PlanDeployment(in);
  // No gate to lift, yet the pods name a group nobody else creates.
  REQUIRE(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event InvalidSchedulingConfiguration"});
  CHECK(plan.actions[0].object["spec"] == json::parse(R"({"schedulingPolicy":{"basic":{}}})"));
  const std::string& message = plan.actions[1].message;
  CHECK(plan.actions[1].event_type == "Warning");
  CHECK(Has(message, "2 pod(s) carry no gate and are held by their scheduler"));
  CHECK(Has(message, "created PodGroup " + kPgA + " without a gang"));
  CHECK(!Has(message, "lifted"));
  CHECK(Has(message, "Fix the wasd.io/scheduling annotation"));
}

TEST_CASE("H1: no carrier, scheduler hold: the release group is created and the Event counts",
          "[unit]") {
  json d = Deployment(2);
  d["metadata"].erase("annotations");
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(HeldPod("web-aaaa-1", rs)), Obj(Pod("web-aaaa-2", rs))};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) ==
          V{"CreatePodGroup " + kPgA, "LiftGate web-aaaa-2", "Event SchedulingGatesLifted"});
  const std::string& message = plan.actions[2].message;
  CHECK(Has(message, "lifted the wasd.io/pod-group scheduling gate of 1 pod(s)"));
  CHECK(Has(message, "1 pod(s) carry no gate and are held by their scheduler"));
  SECTION("the group exists: nothing to create, and nothing to say for held pods") {
    in.podgroups = {Obj(plan.actions[0].object)};
    in.pods = {Obj(HeldPod("web-aaaa-1", rs))};
    CHECK(PlanDeployment(in).actions.empty());
  }
  SECTION("pods that are placed or finished name nothing that waits") {
    json bound = HeldPod("web-aaaa-1", rs);
    bound["spec"]["nodeName"] = "n1";
    in.pods = {Obj(bound)};
    // A bound pod still names the group: the release group is what it names.
    CHECK(Summary(PlanDeployment(in)) ==
          V{"CreatePodGroup " + kPgA, "Event SchedulingGatesLifted"});
    json done = HeldPod("web-aaaa-1", rs);
    done["status"]["phase"] = "Succeeded";
    in.pods = {Obj(done)};
    CHECK(PlanDeployment(in).actions.empty());
  }
}

TEST_CASE("M1: a gated native pod whose link was dropped keeps its gate, with a Warning",
          "[unit]") {
  const json d = Deployment(2);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  json unlinked = Pod("web-aaaa-2", rs);
  unlinked["spec"].erase("schedulingGroup");  // GenericWorkload was off at its create
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs)), Obj(unlinked)};
  SECTION("when the group is created") {
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated",
                             "LiftGate web-aaaa-1", "Event MemberUnlinked"});
    const Action* warning = FindEvent(plan, kReasonMemberUnlinked);
    REQUIRE(warning != nullptr);
    CHECK(warning->event_type == "Warning");
    CHECK(Has(warning->message, "1 pod(s) of ReplicaSet web-aaaa (web-aaaa-2)"));
    CHECK(Has(warning->message, "GenericWorkload was off"));
    CHECK(Has(warning->message, "delete them"));
  }
  SECTION("when the group exists") {
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-1"))};
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"LiftGate web-aaaa-1", "Event MemberUnlinked"});
  }
}

TEST_CASE("M2: Q14 recovers a Terminating PodGroup named only by never-run held pods", "[unit]") {
  const json d = Deployment(2);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(Terminating(StoredPodGroup(w, rs, "pg-1")))};
  in.pods = {Obj(HeldPod("web-aaaa-1", rs)), Obj(HeldPod("web-aaaa-2", rs))};
  SECTION("never scheduled: released, as a Warning (a write to a finalizer)") {
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) ==
            V{"ReleasePodGroup " + kPgA, "Event PodGroupReleased", "RequeueAfter"});
    CHECK(plan.actions[1].event_type == "Warning");
    CHECK(plan.needs_replan);
  }
  SECTION("one pod scheduled (PodScheduled=True, no node yet): waits, and says how pods wait") {
    json scheduled = HeldPod("web-aaaa-2", rs);
    scheduled["status"]["conditions"] =
        json::array({{{"type", "PodScheduled"}, {"status", "True"}}});
    in.pods = {Obj(HeldPod("web-aaaa-1", rs)), Obj(scheduled)};
    const Plan plan = PlanDeployment(in);
    const Action* warning = FindEvent(plan, kReasonPodGroupTerminating);
    REQUIRE(warning != nullptr);
    CHECK(Has(warning->message, "1 pod(s) are held by default-scheduler until PodGroup " + kPgA));
    CHECK(!Has(warning->message, "stay gated"));
  }
  SECTION("a pod wasd never linked (no marker, no gate) keeps it") {
    json foreign = HeldPod("web-aaaa-2", rs);
    foreign["metadata"].erase("labels");
    in.pods = {Obj(HeldPod("web-aaaa-1", rs)), Obj(foreign)};
    CHECK(FindEvent(PlanDeployment(in), kReasonPodGroupReleased) == nullptr);
  }
}

TEST_CASE("L5: the PodGroup's Workload reference follows the version in use", "[unit]") {
  const json d = Deployment(2);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-1"))};  // built with v1beta1
  CHECK(PlanDeployment(in).actions.empty());
  in.scheduling_api_version = "scheduling.k8s.io/v1";
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupOwners " + kPgA});
  CHECK(plan.actions[0].patch.back()["value"]["apiVersion"] == "scheduling.k8s.io/v1");
}

}  // namespace
}  // namespace wasd::planner
