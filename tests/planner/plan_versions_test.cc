// The planner and the scheduling.k8s.io version in use (v1 or v1beta1, found
// by discovery): what it builds carries that version, and no decision
// depends on the apiVersion an object was read through. Also what makes a
// PodGroup or Workload "ours" (owner UIDs only) and a stored template's
// explicit nulls.
#include <catch2/catch.hpp>

#include "plan_fixtures.h"
#include "planner/plan.h"

namespace wasd::planner {
namespace {

using namespace testing;  // NOLINT: test fixtures
using V = std::vector<std::string>;

constexpr const char* kV1 = "scheduling.k8s.io/v1";
const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");

PlanInput Input(const json& deployment, const std::string& version = kV1) {
  PlanInput in;
  in.deployment = Obj(deployment);
  in.scheduling_api_version = version;
  return in;
}

// `pg` with its Workload ownerReference at `api_version`, as the reconciler
// keeps it (L5: the reference follows the version in use).
json OwnerAt(json pg, const std::string& api_version) {
  for (json& ref : pg["metadata"]["ownerReferences"]) {
    if (ref["kind"] == "Workload") ref["apiVersion"] = api_version;
  }
  return pg;
}

// `object` as read through the other version (only apiVersion differs).
json ReadAs(json object, const std::string& api_version) {
  object["apiVersion"] = api_version;
  return object;
}

TEST_CASE("versions: the Workload is built with the version in use", "[unit]") {
  const Plan plan = PlanDeployment(Input(Deployment(3)));
  REQUIRE(Summary(plan) == V{"CreateWorkload " + WorkloadName(), "Event WorkloadCreated"});
  CHECK(plan.actions[0].object["apiVersion"] == kV1);
  const Plan beta = PlanDeployment(Input(Deployment(3), "scheduling.k8s.io/v1beta1"));
  CHECK(beta.actions[0].object["apiVersion"] == "scheduling.k8s.io/v1beta1");
}

TEST_CASE(
    "versions: a PodGroup and its Workload reference use the version in use, not the "
    "cached Workload's apiVersion",
    "[unit]") {
  const json d = Deployment(3);
  // Stored through v1beta1 before the cluster was upgraded; now v1 is in use.
  const json w = ReadAs(StoredWorkload(d), "scheduling.k8s.io/v1beta1");
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs))};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) ==
          V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "LiftGate web-aaaa-1"});
  const json& pg = plan.actions[0].object;
  CHECK(pg["apiVersion"] == kV1);
  CHECK(pg["metadata"]["ownerReferences"][1] == json{{"apiVersion", kV1},
                                                     {"kind", "Workload"},
                                                     {"name", WorkloadName()},
                                                     {"uid", "w-uid-1"}});
}

TEST_CASE("versions: objects read through either version plan the same (no writes)", "[unit]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  const json pg = StoredPodGroup(w, rs, "pg-1");
  for (const std::string read_as : {"scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1"}) {
    for (const std::string in_use : {"scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1"}) {
      PlanInput in = Input(d, in_use);
      in.workloads = {Obj(ReadAs(w, read_as))};
      in.replicasets = {Obj(rs)};
      in.podgroups = {Obj(ReadAs(OwnerAt(pg, in_use), read_as))};
      in.pods = {Obj(Pod("web-aaaa-1", rs, json::array()))};
      INFO("read as " << read_as << ", in use " << in_use);
      CHECK(PlanDeployment(in).empty());
    }
  }
}

TEST_CASE("versions: the owner patch of a PodGroup names the Workload with the version in use",
          "[unit]") {
  const json d = Deployment(3);
  const json w = ReadAs(StoredWorkload(d, "w-new"), "scheduling.k8s.io/v1beta1");
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  // Controlled by our ReplicaSet, still pointing at a Workload that was
  // deleted and re-created (other UID).
  const json pg = StoredPodGroup(StoredWorkload(d, "w-old"), rs, "pg-1");
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(pg)};
  const Plan plan = PlanDeployment(in);
  REQUIRE(Summary(plan) == V{"PatchPodGroupOwners " + kPgA});
  const json& replace = plan.actions[0].patch.back();
  CHECK(replace["op"] == "replace");
  CHECK(replace["value"]["apiVersion"] == kV1);
  CHECK(replace["value"]["uid"] == "w-new");
}

TEST_CASE("ours: a PodGroup naming a Workload of our name but another UID is not ours", "[unit]") {
  // L7: someone's PodGroup whose Workload reference carries our Workload's
  // name (kind Workload, any apiVersion) but not its UID, controlled by no
  // ReplicaSet of ours, is never deleted as ours.
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  json theirs = StoredPodGroup(StoredWorkload(d, "w-someone"), rs, "pg-theirs");
  theirs["metadata"]["name"] = "web-old-podgroup";
  theirs["metadata"]["ownerReferences"][0]["uid"] = "rs-of-someone-else";
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.podgroups = {Obj(theirs), Obj(OwnerAt(StoredPodGroup(w, rs, "pg-1"), kV1))};
  const Plan plan = PlanDeployment(in);
  for (const Action& a : plan.actions) CHECK(a.kind != ActionKind::kDeletePodGroup);

  SECTION("the same PodGroup with our Workload's UID is ours (and deleted: no ReplicaSet)") {
    theirs["metadata"]["ownerReferences"][1]["uid"] = "w-uid-1";
    in.podgroups = {Obj(theirs), Obj(OwnerAt(StoredPodGroup(w, rs, "pg-1"), kV1))};
    const Plan ours = PlanDeployment(in);
    CHECK(Summary(ours) == V{"DeletePodGroup web-old-podgroup", "Event PodGroupDeleted"});
  }
}

TEST_CASE("D4: a stored template's schedulingConstraints null equals absent", "[unit]") {
  const json d = Deployment(3);
  json w = StoredWorkload(d);
  // The API server writes the member out even when unset (no omitempty).
  w["spec"]["podGroupTemplates"][0]["schedulingConstraints"] = nullptr;
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in = Input(d);
  in.workloads = {Obj(w)};
  in.replicasets = {Obj(rs)};
  in.pods = {Obj(Pod("web-aaaa-1", rs))};

  SECTION("a PodGroup built from it carries no null") {
    const Plan plan = PlanDeployment(in);
    REQUIRE(Summary(plan) ==
            V{"CreatePodGroup " + kPgA, "Event PodGroupCreated", "LiftGate web-aaaa-1"});
    CHECK_FALSE(plan.actions[0].object["spec"].contains("schedulingConstraints"));
  }
  SECTION("a stored PodGroup with or without the null member: nothing to write") {
    json pg = OwnerAt(StoredPodGroup(StoredWorkload(d), rs, "pg-1"), kV1);
    in.pods = {Obj(Pod("web-aaaa-1", rs, json::array()))};
    in.podgroups = {Obj(pg)};
    CHECK(PlanDeployment(in).empty());
    pg["spec"]["schedulingConstraints"] = nullptr;
    in.podgroups = {Obj(pg)};
    CHECK(PlanDeployment(in).empty());
  }
}

}  // namespace
}  // namespace wasd::planner
