// Test fixtures for the planner: small builders of the objects an API server
// would hold for one Deployment (Deployment, Workload, ReplicaSets,
// PodGroups, pods), so each test states only what differs.
#ifndef WASD_TESTS_PLANNER_PLAN_FIXTURES_H_
#define WASD_TESTS_PLANNER_PLAN_FIXTURES_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "planner/plan.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/names.h"

namespace wasd::planner::testing {

using nlohmann::json;

inline constexpr const char* kNs = "ml";
inline constexpr const char* kDeployUid = "d-uid-1";

inline Object Obj(json j) { return std::make_shared<const json>(std::move(j)); }

// A gang Deployment "web" (annotation carrier); `min_count` < 0 = derived.
inline json Deployment(std::int64_t replicas, std::int64_t min_count = -1, bool gang = true) {
  json policy = gang ? json{{"gang", json::object()}} : json{{"basic", json::object()}};
  if (gang && min_count >= 0) policy["gang"]["minCount"] = min_count;
  json config = {{"schedulingPolicy", policy}};
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", "web"},
        {"namespace", kNs},
        {"uid", kDeployUid},
        {"labels", {{"wasd.io/managed", "true"}}},
        {"annotations", {{"wasd.io/scheduling", config.dump()}}}}},
      {"spec",
       {{"replicas", replicas},
        {"strategy", {{"type", "Recreate"}}},
        {"template", {{"metadata", {{"labels", {{"app", "web"}}}}}, {"spec", json::object()}}}}}};
}

inline std::string WorkloadName() {
  return workloadbuilder::GenerateWorkloadName("web", kDeployUid);
}

// The Workload the builder makes for `deployment`, as stored (with a UID).
inline json StoredWorkload(const json& deployment, const std::string& uid = "w-uid-1") {
  json config =
      json::parse(deployment["metadata"]["annotations"]["wasd.io/scheduling"].get<std::string>());
  json w = workloadbuilder::BuildWorkload(deployment, config).object;
  w["metadata"]["uid"] = uid;
  w["metadata"]["resourceVersion"] = "10";
  return w;
}

inline json WithMinCount(json workload, std::int64_t min_count) {
  workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = min_count;
  return workload;
}

inline json ReplicaSet(const std::string& hash, const std::string& uid, std::int64_t replicas,
                       const std::string& owner_uid = kDeployUid) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata",
           {{"name", "web-" + hash},
            {"namespace", kNs},
            {"uid", uid},
            {"labels", {{"pod-template-hash", hash}}},
            {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                              {"kind", "Deployment"},
                                              {"name", "web"},
                                              {"uid", owner_uid},
                                              {"controller", true},
                                              {"blockOwnerDeletion", true}}})}}},
          {"spec", {{"replicas", replicas}}}};
}

inline json StoredPodGroup(const json& workload, const json& rs, const std::string& uid) {
  json pg = workloadbuilder::BuildPodGroup(workload, rs).object;
  pg["metadata"]["uid"] = uid;
  pg["metadata"]["finalizers"] = json::array({"scheduling.k8s.io/podgroup-protection"});
  return pg;
}

inline json Terminating(json object) {
  object["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z";
  return object;
}

inline json Pod(const std::string& name, const json& rs,
                json gates = json::array({{{"name", "wasd.io/pod-group"}}})) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", kNs},
                {"uid", "p-" + name},
                {"labels", {{"wasd.io/managed", "true"}}},
                {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                  {"kind", "ReplicaSet"},
                                                  {"name", rs["metadata"]["name"]},
                                                  {"uid", rs["metadata"]["uid"]},
                                                  {"controller", true}}})}}},
              {"spec",
               {{"schedulingGroup",
                 {{"podGroupName",
                   workloadbuilder::PodGroupName(rs["metadata"]["name"].get<std::string>(),
                                                 rs["metadata"]["uid"].get<std::string>())}}}}}};
  if (!gates.empty()) pod["spec"]["schedulingGates"] = std::move(gates);
  return pod;
}

// "Kind name" per action, for order checks.
inline std::vector<std::string> Summary(const Plan& plan) {
  std::vector<std::string> out;
  for (const Action& a : plan.actions) {
    std::string s(ActionKindName(a.kind));
    if (a.kind == ActionKind::kEvent) {
      s += " " + a.reason;
    } else if (a.kind == ActionKind::kCreateWorkload || a.kind == ActionKind::kCreatePodGroup) {
      s += " " + a.object["metadata"]["name"].get<std::string>();
    } else if (a.kind != ActionKind::kRequeueAfter) {
      s += " " + a.name;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace wasd::planner::testing

#endif  // WASD_TESTS_PLANNER_PLAN_FIXTURES_H_
