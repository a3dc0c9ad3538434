// The caches' projections keep every member the planner reads: the planner
// run on projected objects (decoded from realistic, noisy JSON the way the
// informers decode it) plans exactly what it plans on the whole objects.
#include "reconciler/projections.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../planner/plan_fixtures.h"
#include "planner/plan.h"

namespace wasd::reconciler {
namespace {

using namespace planner::testing;  // NOLINT: test fixtures
using nlohmann::json;
using objects::Object;
using planner::Action;
using planner::Plan;
using planner::PlanDeployment;
using planner::PlanInput;

// What a real API server adds around the members the fixtures set.
json Noisy(json o) {
  json& md = o["metadata"];
  md["managedFields"] =
      json::array({{{"manager", "kube-controller-manager"},
                    {"operation", "Update"},
                    {"fieldsV1", {{"f:metadata", {{"f:labels", {{".", json::object()}}}}}}}}});
  md["generation"] = 4;
  md["creationTimestamp"] = "2026-11-30T09:12:44Z";
  if (!md.contains("resourceVersion")) md["resourceVersion"] = "123";
  md["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = o.dump();
  md["annotations"]["deployment.kubernetes.io/revision"] = "3";
  md["labels"]["team"] = "inference";
  o["status"]["observedGeneration"] = 4;
  o["status"]["conditions"] = json::array({{{"type", "Available"}, {"status", "True"}}});
  json& spec = o["spec"];
  if (spec.contains("template")) {
    spec["template"]["spec"]["containers"] =
        json::array({{{"name", "c"}, {"image", "i:1"}, {"env", json::array({{{"name", "E"}}})}}});
  }
  if (o.value("kind", "") == "Pod") {
    spec["containers"] = json::array({{{"name", "c"}, {"image", "i:1"}}});
    spec["volumes"] = json::array({{{"name", "v"}, {"emptyDir", json::object()}}});
    spec["tolerations"] = json::array({{{"key", "k"}, {"operator", "Exists"}}});
  }
  return o;
}

// The informer's view: the noisy object's text decoded with the projection.
Object Projected(const json& full, const base::JsonProjection& p) {
  json got = p.Parse(Noisy(full).dump());
  REQUIRE_FALSE(got.is_discarded());
  return Obj(std::move(got));
}

// Every object of `in` as the API server would send it (Noisy), whole when
// `project` is false, else as the caches keep it.
PlanInput AsServed(const PlanInput& in, bool project) {
  const base::JsonProjection whole;
  auto one = [&](const Object& o, const std::shared_ptr<const base::JsonProjection>& p) {
    return Projected(*o, project ? *p : whole);
  };
  PlanInput out;
  out.priority_classes = in.priority_classes;
  if (in.deployment) out.deployment = one(in.deployment, DeploymentProjection());
  for (const Object& o : in.workloads)
    out.workloads.push_back(one(o, SchedulingObjectProjection()));
  for (const Object& o : in.podgroups)
    out.podgroups.push_back(one(o, SchedulingObjectProjection()));
  for (const Object& o : in.replicasets) out.replicasets.push_back(one(o, ReplicaSetProjection()));
  for (const Object& o : in.pods) out.pods.push_back(one(o, PodProjection()));
  return out;
}

PlanInput ProjectedInput(const PlanInput& in) { return AsServed(in, true); }

std::vector<std::string> Everything(const Plan& plan) {
  std::vector<std::string> out{plan.note, plan.needs_replan ? "replan" : ""};
  for (const Action& a : plan.actions) {
    out.push_back(a.ToString() + " | " + a.object.dump() + " | " + a.patch.dump() + " | " + a.name +
                  "/" + a.uid + " | " + a.resource_version + " | " + a.owner_name + "/" +
                  a.owner_uid + " | " + a.message);
  }
  return out;
}

void CheckSamePlan(const PlanInput& in) {
  const Plan full = PlanDeployment(AsServed(in, false));
  const Plan projected = PlanDeployment(ProjectedInput(in));
  CHECK(Everything(projected) == Everything(full));
}

const std::string kPgA = workloadbuilder::PodGroupName("web-aaaa", "rs-a");

TEST_CASE("projections: the planner plans the same on projected objects", "[unit][projection]") {
  const json d = Deployment(3);
  const json w = StoredWorkload(d);
  const json rs = ReplicaSet("aaaa", "rs-a", 3);
  PlanInput in;
  in.deployment = Obj(d);

  SECTION("new Deployment: the Workload") { CheckSamePlan(in); }
  SECTION("gated pods: PodGroup, then gate lifts") {
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(Pod("web-aaaa-2", rs)), Obj(Pod("web-aaaa-1", rs))};
    const Plan plan = PlanDeployment(ProjectedInput(in));
    REQUIRE(plan.actions.size() == 4);  // create, event, two lifts
    CheckSamePlan(in);
  }
  SECTION("steady state and scale up / down") {
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(rs)};
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
    CheckSamePlan(in);
    in.deployment = Obj(Deployment(5));
    in.replicasets = {Obj(ReplicaSet("aaaa", "rs-a", 5))};
    CheckSamePlan(in);
    in.deployment = Obj(Deployment(0));
    in.replicasets = {Obj(ReplicaSet("aaaa", "rs-a", 0))};
    CheckSamePlan(in);
  }
  SECTION("rollout: old PodGroup terminating, a running and a finished pod") {
    const json rs_b = ReplicaSet("bbbb", "rs-b", 3);
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(ReplicaSet("aaaa", "rs-a", 0)), Obj(rs_b)};
    in.podgroups = {Obj(Terminating(StoredPodGroup(w, rs, "pg-a")))};
    json running = Pod("web-aaaa-1", rs, json::array());
    running["spec"]["nodeName"] = "node-1";
    json done = Pod("web-aaaa-2", rs, json::array());
    done["status"]["phase"] = "Succeeded";
    in.pods = {Obj(running), Obj(done), Obj(Pod("web-bbbb-1", rs_b)),
               Obj(Terminating(Pod("web-bbbb-2", rs_b)))};
    CheckSamePlan(in);
  }
  SECTION("foreign Workload and PodGroup with our names") {
    json foreign = w;
    foreign["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
    in.workloads = {Obj(foreign)};
    CheckSamePlan(in);
    in.workloads = {Obj(w)};
    in.replicasets = {Obj(rs)};
    json pg = StoredPodGroup(w, rs, "pg-a");
    pg["metadata"]["ownerReferences"] = json::array();
    in.podgroups = {Obj(pg)};
    in.pods = {Obj(Pod("web-aaaa-1", rs))};
    CheckSamePlan(in);
  }
  SECTION("priority class and basic policy, spec.scheduling carrier") {
    json dp = Deployment(2, -1, false);
    dp["spec"]["template"]["spec"]["priorityClassName"] = "high";
    in.deployment = Obj(dp);
    in.priority_classes = {{"high", 1000}};
    CheckSamePlan(in);
    json ds = Deployment(2);
    ds["spec"]["scheduling"] =
        json::parse(ds["metadata"]["annotations"]["wasd.io/scheduling"].get<std::string>());
    ds["metadata"]["annotations"].erase("wasd.io/scheduling");
    in.deployment = Obj(ds);
    CheckSamePlan(in);
  }
  SECTION("no usable carrier: gated pods are released (Q15)") {
    json bare = Deployment(2);
    bare["metadata"]["annotations"].erase("wasd.io/scheduling");
    in.deployment = Obj(bare);
    in.replicasets = {Obj(rs)};
    in.pods = {Obj(Pod("web-aaaa-1", rs))};
    CheckSamePlan(in);
  }
  SECTION("PodGroup of a vanished ReplicaSet; a pod naming a PodGroup") {
    in.workloads = {Obj(w)};
    in.podgroups = {Obj(StoredPodGroup(w, rs, "pg-a"))};
    json stray = Pod("other", ReplicaSet("zzzz", "rs-z", 1, "someone"), json::array());
    stray["spec"]["schedulingGroup"]["podGroupName"] = kPgA;
    in.pods = {Obj(stray)};
    CheckSamePlan(in);
    in.pods.clear();
    CheckSamePlan(in);
  }
}

TEST_CASE("projections: a 15 KB pod keeps its identity, links, gates and phase, ~1 KB",
          "[unit][projection]") {
  const std::filesystem::path file =
      std::filesystem::path(WASD_TESTDATA) / "bench" / "pod-15k.json";
  std::ifstream f(file);
  REQUIRE(f.good());
  std::stringstream text;
  text << f.rdbuf();
  json full = json::parse(text.str());
  full["spec"]["schedulingGates"] = json::array({{{"name", "wasd.io/pod-group"}}});
  const json got = PodProjection()->Parse(full.dump());
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    CHECK(got["metadata"][key] == full["metadata"][key]);
  }
  const json& ref = got["metadata"]["ownerReferences"][0];
  CHECK(ref == json{{"kind", "ReplicaSet"},
                    {"name", full["metadata"]["ownerReferences"][0]["name"]},
                    {"uid", full["metadata"]["ownerReferences"][0]["uid"]},
                    {"controller", true}});
  CHECK(got["metadata"]["labels"] ==
        json{{"wasd.io/managed", "true"}, {"pod-template-hash", "6c9f7d8b5d"}});
  CHECK(got["spec"]["schedulingGates"] == full["spec"]["schedulingGates"]);
  CHECK(got["spec"]["schedulingGroup"] == full["spec"]["schedulingGroup"]);
  CHECK(got["spec"]["nodeName"] == "gpu-node-017");
  // The phase, and for the gang doctor (gang_status.cc) the PodScheduled
  // condition (False/Unschedulable and its message; its time) and startTime.
  json scheduled;
  for (const json& c : full["status"]["conditions"]) {
    if (c["type"] == "PodScheduled") scheduled = c;
  }
  REQUIRE(full["status"]["conditions"].size() == 5);
  CHECK(got["status"] == json{{"phase", "Running"},
                              {"conditions", json::array({scheduled})},
                              {"startTime", full["status"]["startTime"]}});
  CHECK_FALSE(got["metadata"].contains("managedFields"));
  CHECK_FALSE(got["spec"].contains("containers"));
  INFO(got.dump());
  // The running pod's other four conditions were ~0.4 KB of the 1 KB.
  CHECK(got.dump().size() < 1024);
}

}  // namespace
}  // namespace wasd::reconciler
