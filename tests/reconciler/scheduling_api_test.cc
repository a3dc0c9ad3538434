// Discovery of the scheduling.k8s.io version that serves Workloads and
// PodGroups (scheduling_api.h), its preference order, and the reconciler's
// writes through the version chosen (executor, plan rounds, metrics).
#include "kube/scheduling_api.h"

#include <catch2/catch.hpp>
#include <map>

#include "planner/plan.h"
#include "reconciler/executor.h"
#include "reconciler/plan_rounds.h"
#include "tests/planner/plan_fixtures.h"
#include "tests/reconciler/fake_api.h"
#include "tests/reconciler/reconciler_fixtures.h"

namespace wasd::reconciler {
namespace {

using nlohmann::json;
using planner::testing::kNs;
using planner::testing::WorkloadName;
using testing::FakeApi;
using testing::Harness;
using testing::InternalError;
using testing::NotFound;

json ResourceList(std::initializer_list<const char*> names) {
  json resources = json::array();
  for (const char* n : names) resources.push_back({{"name", n}, {"namespaced", true}});
  return {{"kind", "APIResourceList"}, {"resources", resources}};
}

// A getter answering from `served` (group version -> resource list); 404 otherwise.
GroupVersionGetter Serving(std::map<std::string, json> served) {
  return [served = std::move(served)](std::string_view gv) -> base::Result<json> {
    const auto it = served.find(std::string(gv));
    if (it == served.end()) return NotFound("the server could not find the requested resource");
    return it->second;
  };
}

const char* const kV1 = "scheduling.k8s.io/v1";
const char* const kV1beta1 = "scheduling.k8s.io/v1beta1";

TEST_CASE("discovery: a resource list serves both kinds only when it names both", "[unit]") {
  CHECK(ListsWorkloadsAndPodGroups(ResourceList({"workloads", "podgroups", "podgroups/status"})));
  CHECK_FALSE(ListsWorkloadsAndPodGroups(ResourceList({"priorityclasses"})));
  CHECK_FALSE(ListsWorkloadsAndPodGroups(ResourceList({"workloads", "podgroups/status"})));
  CHECK_FALSE(ListsWorkloadsAndPodGroups(json::object()));
  CHECK_FALSE(ListsWorkloadsAndPodGroups(json{{"resources", "nope"}}));
  CHECK_FALSE(ListsWorkloadsAndPodGroups(json{{"resources", json::array({1, json::object()})}}));
}

TEST_CASE("discovery: v1 preferred, v1beta1 the fallback", "[unit]") {
  const json both = ResourceList({"workloads", "podgroups", "priorityclasses"});
  SECTION("both served: v1") {
    const SchedulingDiscovery d = DiscoverSchedulingApi(
        Serving({{kV1, both}, {kV1beta1, ResourceList({"workloads", "podgroups"})}}));
    REQUIRE(d.ok());
    CHECK(d.api.version == "v1");
    CHECK(d.served == std::vector<std::string>{"v1", "v1beta1"});
    CHECK(DescribeDiscovery(d) == "v1 (also served: v1beta1)");
    CHECK(d.api.Workloads().group_version == kV1);
    CHECK(d.api.PodGroups().plural == "podgroups");
  }
  SECTION("v1beta1 only (Kubernetes 1.37): v1beta1") {
    const SchedulingDiscovery d = DiscoverSchedulingApi(Serving({{kV1beta1, both}}));
    CHECK(d.api.version == "v1beta1");
    CHECK(DescribeDiscovery(d) == "v1beta1");
  }
  SECTION("v1 with PriorityClasses only (Kubernetes 1.37 serves that too): v1beta1") {
    const SchedulingDiscovery d = DiscoverSchedulingApi(
        Serving({{kV1, ResourceList({"priorityclasses"})}, {kV1beta1, both}}));
    CHECK(d.api.version == "v1beta1");
    CHECK(d.served == std::vector<std::string>{"v1beta1"});
  }
  SECTION("v1 only: v1") {
    CHECK(DiscoverSchedulingApi(Serving({{kV1, both}})).api.version == "v1");
  }
  SECTION("neither: not served, not an error") {
    const SchedulingDiscovery d =
        DiscoverSchedulingApi(Serving({{kV1, ResourceList({"priorityclasses"})}}));
    CHECK(d.ok());
    CHECK_FALSE(d.api.served());
    CHECK(DescribeDiscovery(d) == "none");
  }
  SECTION("a failure that is not a 404 is an error, never 'not served'") {
    const SchedulingDiscovery d =
        DiscoverSchedulingApi([&](std::string_view gv) -> base::Result<json> {
          if (gv == kV1) return InternalError("etcd is away");
          return both;
        });
    CHECK_FALSE(d.ok());
    CHECK_FALSE(d.api.served());
    CHECK(d.error.message().find("etcd is away") != std::string::npos);
  }
}

TEST_CASE("discovery through the Api seam follows what the server serves", "[unit]") {
  FakeApi api;
  const auto get = [&](std::string_view gv) { return api.GetGroupVersion(gv); };
  CHECK(DiscoverSchedulingApi(get).api.version == "v1beta1");  // the fake's default: 1.37
  api.ServeGroupVersion(kV1, {"workloads", "podgroups", "priorityclasses"});
  CHECK(DiscoverSchedulingApi(get).api.version == "v1");
  api.ServeGroupVersion(kV1beta1, {});
  CHECK(DiscoverSchedulingApi(get).served == std::vector<std::string>{"v1"});
  api.ServeGroupVersion(kV1, {});
  CHECK_FALSE(DiscoverSchedulingApi(get).api.served());
}

TEST_CASE("version switch: writes go through the version in use, with its apiVersion", "[unit]") {
  Harness h;
  const SchedulingApi v1{"v1"};
  const runtime::Logger log{runtime::LogLevel::kError};
  auto observe = [&] {
    planner::PlanInput in = h.Observe();
    in.workloads.clear();
    for (const json& o : h.api.Objects(Workloads(v1), kNs))
      in.workloads.push_back(planner::testing::Obj(o));
    in.scheduling_api_version = v1.GroupVersion();
    return in;
  };
  const ReconcileResult r = RunPlanRounds("ml/web", observe, h.api, h.executor, log, v1);
  REQUIRE(r.status.ok());
  const auto stored = h.api.Find(Workloads(v1), kNs, WorkloadName());
  REQUIRE(stored);
  CHECK((*stored)["apiVersion"] == kV1);
  // Nothing went to the other version.
  CHECK(h.api.Objects(Workloads(), kNs).empty());
}

TEST_CASE("version switch: a create answered 404 fails the reconcile as not found", "[unit]") {
  // The controller re-discovers the version on such an answer.
  Harness h;
  const planner::Plan plan = h.PlanNow();  // CreateWorkload
  h.api.FailNext("create", NotFound("the server could not find the requested resource"),
                 "workloads");
  const ExecuteOutcome out = h.executor.Execute(h.deployment, plan, SchedulingApi{"v1beta1"});
  CHECK(out.status.not_found());
  CHECK(h.EventReasons() == std::vector<std::string>{"FailedWorkloadCreate"});
}

TEST_CASE("metrics: the scheduling API version gauge", "[unit]") {
  Metrics m;
  const auto has = [&](const std::string& line) {
    return m.Render().find("\n" + line + "\n") != std::string::npos;
  };
  CHECK(has("wasd_reconciler_scheduling_api_version{version=\"v1\"} 0"));
  CHECK(has("wasd_reconciler_scheduling_api_version{version=\"v1beta1\"} 0"));
  m.SetSchedulingApiVersion("v1beta1");
  CHECK(has("wasd_reconciler_scheduling_api_version{version=\"v1\"} 0"));
  CHECK(has("wasd_reconciler_scheduling_api_version{version=\"v1beta1\"} 1"));
  m.SetSchedulingApiVersion("v1");
  CHECK(has("wasd_reconciler_scheduling_api_version{version=\"v1\"} 1"));
  CHECK(has("wasd_reconciler_scheduling_api_version{version=\"v1beta1\"} 0"));
}

}  // namespace
}  // namespace wasd::reconciler
