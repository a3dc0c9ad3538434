// The planner for the non-native backends (issue 16, docs/design.md Q19): the same
// order as native (group object exists → gates lifted) without a Workload,
// one group object per active ReplicaSet of the backend's API, minMember
// patched at the backend's pointer, deletion at zero, the foreign-object
// stop. Every case runs for volcano, kai and coscheduling.
#include <catch2/catch.hpp>

#include "plan_fixtures.h"
#include "planner/plan.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::planner {
namespace {

using namespace testing;  // NOLINT: test fixtures
using workloadbuilder::Backend;
using V = std::vector<std::string>;

constexpr Backend kBackends[] = {Backend::kVolcano, Backend::kKai, Backend::kCoscheduling};

const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");
const std::string kPgB = workloadbuilder::PodGroupName("web-bbbb", "rs-b");

std::string BackendWord(Backend b) { return std::string(workloadbuilder::BackendName(b)); }

json BackendDeployment(Backend b, std::int64_t replicas, std::int64_t min_count = -1) {
  json d = Deployment(replicas, min_count);
  d["spec"]["template"]["metadata"]["labels"][std::string(workloadbuilder::kBackendLabel)] =
      BackendWord(b);
  return d;
}

json Config(const json& deployment) {
  return json::parse(
      deployment["metadata"]["annotations"]["wasd.io/scheduling"].get<std::string>());
}

// The group object as the API server holds it: what the compiler makes, with a uid.
json StoredGroup(Backend b, const json& deployment, const json& rs, const std::string& uid) {
  json pg = workloadbuilder::BuildBackendPodGroup(b, deployment, Config(deployment), rs, {}).object;
  pg["metadata"]["uid"] = uid;
  pg["metadata"]["resourceVersion"] = "7";
  return pg;
}

// A pod of `rs` linked to its group the way backend `b` links pods (no
// spec.schedulingGroup), gated unless `gates` is empty.
json BackendPod(Backend b, const std::string& name, const json& rs,
                json gates = json::array({{{"name", "wasd.io/pod-group"}}})) {
  json pod = Pod(name, rs, std::move(gates));
  pod["spec"].erase("schedulingGroup");
  const std::string group = workloadbuilder::PodGroupName(rs["metadata"]["name"].get<std::string>(),
                                                          rs["metadata"]["uid"].get<std::string>());
  pod["metadata"]["labels"][std::string(workloadbuilder::kBackendLabel)] = BackendWord(b);
  switch (b) {
    case Backend::kVolcano:
      pod["metadata"]["annotations"][std::string(workloadbuilder::kVolcanoGroupAnnotation)] = group;
      break;
    case Backend::kKai:
      pod["metadata"]["annotations"][std::string(workloadbuilder::kKaiGroupAnnotation)] = group;
      break;
    case Backend::kCoscheduling:
      pod["metadata"]["labels"][std::string(workloadbuilder::kCoschedulingGroupLabel)] = group;
      break;
    case Backend::kNative: break;
  }
  return pod;
}

PlanInput Input(const json& deployment) {
  PlanInput in;
  in.deployment = Obj(deployment);
  return in;
}

std::string ApiVersion(Backend b) { return workloadbuilder::GroupVersion(b); }

TEST_CASE("backends: a new Deployment gets a group object per ReplicaSet, then gate lifts",
          "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 3);
    const json rs = ReplicaSet("aaaa", "rs-a", 3);
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(BackendPod(b, "web-aaaa-2", rs)), Obj(BackendPod(b, "web-aaaa-1", rs))};
    const Plan plan = PlanDeployment(in);
    CHECK(plan.backend == b);
    CHECK_FALSE(plan.needs_replan);
    // No Workload: the group object comes first, the gates after it.
    CHECK(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated",
                             "LiftGate web-aaaa-1", "LiftGate web-aaaa-2"});
    const json& pg = plan.actions[0].object;
    CHECK(pg["apiVersion"] == ApiVersion(b));
    CHECK(pg["kind"] == "PodGroup");
    CHECK(pg["metadata"]["namespace"] == kNs);
    // Controlled by the ReplicaSet and by nothing else (GC removes it with it).
    REQUIRE(pg["metadata"]["ownerReferences"].size() == 1);
    CHECK(pg["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet");
    CHECK(pg["metadata"]["ownerReferences"][0]["uid"] == "rs-a");
    CHECK(pg["metadata"]["ownerReferences"][0]["controller"] == true);
    CHECK(pg["spec"]["minMember"] == 3);
    CHECK(plan.actions[0].min_count == 3);
    CHECK(plan.actions[1].message.find(std::string(workloadbuilder::Info(b).api_group)) !=
          std::string::npos);
  }
}

TEST_CASE("backends: steady state makes no writes", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json rs = ReplicaSet("aaaa", "rs-a", 2);
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(StoredGroup(b, d, rs, "pg-a"))};
    in.pods = {Obj(BackendPod(b, "web-aaaa-1", rs, json::array())),
               Obj(BackendPod(b, "web-aaaa-2", rs, json::array()))};
    CHECK(PlanDeployment(in).empty());
  }
}

TEST_CASE("backends: scale up and down patch minMember with a uid test", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json stored =
        StoredGroup(b, BackendDeployment(b, 3), ReplicaSet("aaaa", "rs-a", 3), "pg-a");
    // Up: minMember first, then the new pods' gates (KAI: see the next test).
    const json up = ReplicaSet("aaaa", "rs-a", 5);
    PlanInput in = Input(BackendDeployment(b, 5));
    in.replicasets = {Obj(up)};
    in.podgroups = {Obj(stored)};
    in.pods = {Obj(BackendPod(b, "web-aaaa-1", up, json::array())),
               Obj(BackendPod(b, "web-aaaa-4", up))};
    Plan plan = PlanDeployment(in);
    if (b == Backend::kKai) {
      // Nothing active yet: nothing KAI could evict, and nothing raised.
      CHECK(Summary(plan) == V{"LiftGate web-aaaa-4"});
    } else {
      CHECK(Summary(plan) == V{"PatchPodGroupMinCount " + kPgA, "LiftGate web-aaaa-4"});
      CHECK(plan.actions[0].patch == json::parse(R"([
      {"op":"test","path":"/metadata/uid","value":"pg-a"},
      {"op":"replace","path":"/spec/minMember","value":5}])"));
    }
    // Down.
    const json down = ReplicaSet("aaaa", "rs-a", 2);
    in = Input(BackendDeployment(b, 2));
    in.replicasets = {Obj(down)};
    in.podgroups = {Obj(stored)};
    plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"PatchPodGroupMinCount " + kPgA});
    CHECK(plan.actions[0].min_count == 2);
    // An explicit minCount does not follow the replicas.
    const json d = BackendDeployment(b, 5, 2);
    in = Input(d);
    in.replicasets = {Obj(up)};
    in.podgroups = {Obj(StoredGroup(b, d, up, "pg-a"))};
    CHECK(PlanDeployment(in).empty());
  }
}

// A running member: no gate, bound to a node, Running.
json Running(json pod) {
  pod["spec"]["nodeName"] = "node-1";
  pod["status"]["phase"] = "Running";
  return pod;
}

TEST_CASE("backends: a KAI gang with a derived minMember grows only with its active members",
          "[unit]") {
  // H1: 4 running, scaled to 6 where one more fits. minMember 6 at once would
  // leave the group below it (4 active < 6) and KAI's stale-gang eviction
  // would take all 4 down after the grace period.
  const Backend b = Backend::kKai;
  const json rs = ReplicaSet("aaaa", "rs-a", 6);
  const json stored =
      StoredGroup(b, BackendDeployment(b, 4), ReplicaSet("aaaa", "rs-a", 4), "pg-a");
  REQUIRE(stored["spec"]["minMember"] == 4);
  std::vector<Object> pods;
  for (int i = 1; i <= 4; ++i) {
    pods.push_back(Obj(Running(BackendPod(b, "web-aaaa-" + std::to_string(i), rs, json::array()))));
  }
  PlanInput in = Input(BackendDeployment(b, 6));
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(stored)};
  in.pods = pods;
  in.pods.push_back(Obj(BackendPod(b, "web-aaaa-5", rs)));
  in.pods.push_back(Obj(BackendPod(b, "web-aaaa-6", rs)));
  // The new members' gates are lifted; minMember stays at the 4 active ones.
  CHECK(Summary(PlanDeployment(in)) == V{"LiftGate web-aaaa-5", "LiftGate web-aaaa-6"});

  // KAI placed one more (elastic beyond minMember): minMember follows to 5.
  in.pods = pods;
  in.pods.push_back(Obj(Running(BackendPod(b, "web-aaaa-5", rs, json::array()))));
  in.pods.push_back(Obj(BackendPod(b, "web-aaaa-6", rs, json::array())));
  Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupMinCount " + kPgA});
  CHECK(plan.actions[0].min_count == 5);

  // All six active: the full gang.
  in.pods.back() = Obj(Running(BackendPod(b, "web-aaaa-6", rs, json::array())));
  plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupMinCount " + kPgA});
  CHECK(plan.actions[0].min_count == 6);

  // A pod that is finished or being deleted is not active.
  in.pods.back() = Obj(Terminating(Running(BackendPod(b, "web-aaaa-6", rs, json::array()))));
  plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupMinCount " + kPgA});
  CHECK(plan.actions[0].min_count == 5);

  // Scale-down lowers at once, below the active members (an explicit minCount
  // is written as is: the test above).
  in.deployment = Obj(BackendDeployment(b, 2));
  in.replicasets = {Obj(ReplicaSet("aaaa", "rs-a", 2))};
  in.pods = pods;
  plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupMinCount " + kPgA});
  CHECK(plan.actions[0].min_count == 2);

  // A group re-created while members run starts at what is active.
  in = Input(BackendDeployment(b, 6));
  in.replicasets = {Obj(rs)};
  in.pods = pods;
  plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated"});
  CHECK(plan.actions[0].object["spec"]["minMember"] == 4);
  CHECK(plan.actions[0].min_count == 4);

  // Volcano and coscheduling do not evict a running gang below its minimum: minMember 6.
  for (const Backend other : {Backend::kVolcano, Backend::kCoscheduling}) {
    INFO("backend " << BackendWord(other));
    in = Input(BackendDeployment(other, 6));
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(
        StoredGroup(other, BackendDeployment(other, 4), ReplicaSet("aaaa", "rs-a", 4), "pg-a"))};
    for (int i = 1; i <= 4; ++i) {
      in.pods.push_back(
          Obj(Running(BackendPod(other, "web-aaaa-" + std::to_string(i), rs, json::array()))));
    }
    plan = PlanDeployment(in);
    REQUIRE_FALSE(plan.actions.empty());
    CHECK(plan.actions[0].min_count == 6);
  }
}

TEST_CASE("backends: scale to zero deletes the group object once its pods are gone", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json stored =
        StoredGroup(b, BackendDeployment(b, 3), ReplicaSet("aaaa", "rs-a", 3), "pg-a");
    const json rs = ReplicaSet("aaaa", "rs-a", 0);
    PlanInput in = Input(BackendDeployment(b, 0));
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(stored)};
    // No pod names it: deleted with its uid and resourceVersion, after a
    // live re-read of its ReplicaSet (Q13).
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted"});
    CHECK(plan.backend == b);
    CHECK(plan.actions[0].uid == "pg-a");
    CHECK(plan.actions[0].resource_version == "7");
    CHECK(plan.actions[0].owner_name == "web-aaaa");
    CHECK(plan.actions[0].owner_uid == "rs-a");
    CHECK_FALSE(plan.actions[0].owner_may_be_active);
    // A pod still running names it: kept until it is gone.
    in.pods = {Obj(BackendPod(b, "web-aaaa-1", rs, json::array()))};
    CHECK(PlanDeployment(in).empty());
  }
}

TEST_CASE("backends: Recreate rollout creates the new group, deletes the old one", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json old_rs = ReplicaSet("aaaa", "rs-a", 0);
    const json new_rs = ReplicaSet("bbbb", "rs-b", 2);
    PlanInput in = Input(d);
    in.replicasets = {Obj(old_rs), Obj(new_rs)};
    in.podgroups = {Obj(StoredGroup(b, d, ReplicaSet("aaaa", "rs-a", 2), "pg-a"))};
    in.pods = {Obj(BackendPod(b, "web-bbbb-1", new_rs)), Obj(BackendPod(b, "web-bbbb-2", new_rs))};
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted",
                             "CreatePodGroup " + kPgB, "Event PodGroupCreated",
                             "LiftGate web-bbbb-1", "LiftGate web-bbbb-2"});
  }
}

TEST_CASE("backends: the ReplicaSet's scale-up is cached before the Deployment's: wait", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json rs = ReplicaSet("aaaa", "rs-a", 3);
    PlanInput in = Input(BackendDeployment(b, 0));
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(BackendPod(b, "web-aaaa-1", rs))};
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"RequeueAfter"});
  }
}

TEST_CASE("backends: group objects carry wasd's label and the Deployment's UID", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json rs = ReplicaSet("aaaa", "rs-a", 2);
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"CreatePodGroup " + kPgA, "Event PodGroupCreated"});
    const json& meta = plan.actions[0].object["metadata"];
    CHECK(meta["labels"] == json({{"wasd.io/managed", "true"}}));
    CHECK(meta["annotations"] == json({{"wasd.io/deployment-uid", kDeployUid}}));

    // A group built before it had them (seen through a create's AlreadyExists):
    // marked, uid-tested, once.
    json old = StoredGroup(b, d, rs, "pg-a");
    old["metadata"].erase("labels");
    old["metadata"]["annotations"] = {{"other", "x"}};
    in.podgroups = {Obj(old)};
    const Plan marked = PlanDeployment(in);
    REQUIRE(Summary(marked) == V{"PatchPodGroupOwners " + kPgA});
    CHECK(marked.actions[0].patch == json::parse(R"([
      {"op":"test","path":"/metadata/uid","value":"pg-a"},
      {"op":"add","path":"/metadata/labels","value":{"wasd.io/managed":"true"}},
      {"op":"add","path":"/metadata/annotations/wasd.io~1deployment-uid","value":"d-uid-1"}])"));
  }
}

TEST_CASE("backends: the group of a ReplicaSet deleted with propagationPolicy Orphan is deleted",
          "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json gone = ReplicaSet("aaaa", "rs-a", 2);
    const json rs = ReplicaSet("bbbb", "rs-b", 2);
    // The garbage collector removed the orphaned ReplicaSet's reference.
    json orphan = StoredGroup(b, d, gone, "pg-a");
    orphan["metadata"].erase("ownerReferences");
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(StoredGroup(b, d, rs, "pg-b")), Obj(orphan)};
    // While a pod still names it: kept.
    in.pods = {Obj(Running(BackendPod(b, "web-aaaa-1", gone, json::array())))};
    CHECK(PlanDeployment(in).empty());
    in.pods.clear();
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) == V{"DeletePodGroup " + kPgA, "Event PodGroupDeleted"});
    CHECK(plan.actions[0].uid == "pg-a");
    // Without wasd's label, or for another Deployment: not ours, left alone.
    json unlabelled = orphan;
    unlabelled["metadata"].erase("labels");
    json other = orphan;
    other["metadata"]["annotations"]["wasd.io/deployment-uid"] = "another-deployment";
    for (const json& pg : {unlabelled, other}) {
      in.podgroups = {Obj(StoredGroup(b, d, rs, "pg-b")), Obj(pg)};
      CHECK(PlanDeployment(in).empty());
    }
  }
}

TEST_CASE("backends: a member whose link another actor rewrote is still its ReplicaSet's",
          "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json rs = ReplicaSet("aaaa", "rs-a", 2);
    json relinked = BackendPod(b, "web-aaaa-2", rs);
    switch (b) {
      case Backend::kVolcano:
        relinked["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "pg-own";
        break;
      case Backend::kKai: relinked["metadata"]["annotations"]["pod-group-name"] = "pg-own"; break;
      case Backend::kCoscheduling:
        relinked["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "pg-own";
        break;
      case Backend::kNative: break;
    }
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(StoredGroup(b, d, rs, "pg-a"))};
    in.pods = {Obj(BackendPod(b, "web-aaaa-1", rs)), Obj(relinked)};
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) ==
            V{"LiftGate web-aaaa-1", "LiftGate web-aaaa-2", "Event MemberRelinked"});
    const Action& warning = plan.actions[2];
    CHECK(warning.event_type == "Warning");
    CHECK(warning.message.find("Pod web-aaaa-2 of ReplicaSet web-aaaa names") != std::string::npos);
    CHECK(warning.message.find("pg-own instead of " + kPgA) != std::string::npos);
    CHECK(warning.message.find("another actor changed its") != std::string::npos);
    CHECK((warning.message.find("v0.15.0") != std::string::npos) == (b == Backend::kKai));
  }
  // KAI: a re-linked member counts in the other group, not in ours: it never
  // raises our minMember (that group would then be below it and stale).
  const Backend b = Backend::kKai;
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(BackendDeployment(b, 3));
  in.replicasets = {Obj(rs)};
  in.podgroups = {
      Obj(StoredGroup(b, BackendDeployment(b, 2), ReplicaSet("aaaa", "rs-a", 2), "pg-a"))};
  json relinked = Running(BackendPod(b, "web-aaaa-3", rs, json::array()));
  relinked["metadata"]["annotations"]["pod-group-name"] = "pg-own";
  in.pods = {Obj(Running(BackendPod(b, "web-aaaa-1", rs, json::array()))),
             Obj(Running(BackendPod(b, "web-aaaa-2", rs, json::array()))), Obj(relinked)};
  CHECK(Summary(PlanDeployment(in)) == V{"Event MemberRelinked"});
}

TEST_CASE("backends: a Terminating group object is waited for, never released", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json rs = ReplicaSet("aaaa", "rs-a", 2);
    json pg = Terminating(StoredGroup(b, d, rs, "pg-a"));
    pg["metadata"]["finalizers"] = json::array({"example.com/keep"});
    PlanInput in = Input(d);
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(pg)};
    in.pods = {Obj(BackendPod(b, "web-aaaa-1", rs))};  // gated, never ran
    const Plan plan = PlanDeployment(in);
    CHECK(Summary(plan) == V{"Event PodGroupTerminating", "RequeueAfter"});
  }
}

TEST_CASE("backends: a foreign object with our name stops every write", "[unit]") {
  for (const Backend b : kBackends) {
    INFO("backend " << BackendWord(b));
    const json d = BackendDeployment(b, 2);
    const json rs = ReplicaSet("aaaa", "rs-a", 2);
    json other = StoredGroup(b, d, rs, "pg-x");
    other["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
    other["metadata"]["ownerReferences"][0]["kind"] = "Job";
    json unowned = StoredGroup(b, d, rs, "pg-y");
    unowned["metadata"].erase("ownerReferences");
    for (const json& foreign : {other, unowned}) {
      PlanInput in = Input(d);
      in.replicasets = {Obj(rs)};
      in.podgroups = {Obj(foreign)};
      in.pods = {Obj(BackendPod(b, "web-aaaa-1", rs))};
      const Plan plan = PlanDeployment(in);
      CHECK(Summary(plan) == V{"Event ForeignObject"});
      CHECK(plan.note == "foreign PodGroup");
    }
  }
}

TEST_CASE("backends: a template label that names no backend holds the pods, with a Warning",
          "[unit]") {
  json d = Deployment(2);
  d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "yunikorn";
  const json rs = ReplicaSet("aaaa", "rs-a", 2);
  PlanInput in = Input(d);
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs))};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"Event InvalidSchedulingConfiguration"});
  CHECK(plan.actions[0].event_type == "Warning");
  CHECK(plan.actions[0].message.find("\"yunikorn\"") != std::string::npos);
}

TEST_CASE("backends: a Deployment without the label is native", "[unit]") {
  const Plan plan = PlanDeployment(Input(Deployment(3)));
  CHECK(plan.backend == Backend::kNative);
  CHECK(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event WorkloadCreated"});
}

}  // namespace
}  // namespace wasd::planner
