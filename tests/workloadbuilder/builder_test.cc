#include "workloadbuilder/builder.h"

#include <catch2/catch.hpp>

#include "tests/workloadbuilder/error_matchers.h"
#include "workloadbuilder/scheduling_config.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;
using wasd::testing::LoadJson;

namespace {

// The KEP's examples carry spec.scheduling (read here only to compare the
// builder with the KEP's objects; wasd's own carrier is the annotation).
json ConfigOf(const json& deployment) {
  const wb::SchedulingConfig c = wb::HasSchedulingCarrier(deployment)
                                     ? wb::ReadSchedulingConfig(deployment)
                                     : wb::ReadInTreeSchedulingConfig(deployment);
  REQUIRE(c.usable());
  REQUIRE(c.errors.empty());
  return c.config;
}

}  // namespace

TEST_CASE("BuildWorkload compiles the KEP examples", "[unit]") {
  for (int i = 1; i <= 3; ++i) {
    const std::string stem = "workloadbuilder/kep-example-" + std::to_string(i);
    DYNAMIC_SECTION(stem) {
      INFO(stem);
      const json deployment = LoadJson(stem + "-deployment.json");
      const wb::BuildResult built = wb::BuildWorkload(deployment, ConfigOf(deployment));
      REQUIRE(built.ok());
      CHECK(built.object == LoadJson(stem + "-workload.json"));
    }
  }
}

TEST_CASE("BuildWorkload from the YAML annotation equals the field carrier", "[unit]") {
  json deployment = LoadJson("workloadbuilder/kep-example-1-deployment.json");
  deployment["spec"].erase("scheduling");
  deployment["metadata"]["annotations"] = {
      {"wasd.io/scheduling",
       wasd::testing::ReadTestFile("workloadbuilder/annotation-example-1.yaml")}};
  const wb::BuildResult built = wb::BuildWorkload(deployment, ConfigOf(deployment));
  REQUIRE(built.ok());
  CHECK(built.object == LoadJson("workloadbuilder/kep-example-1-workload.json"));
}

TEST_CASE("BuildPodGroup materializes the template for a ReplicaSet", "[unit]") {
  for (int i : {1, 3}) {
    const std::string stem = "workloadbuilder/kep-example-" + std::to_string(i);
    DYNAMIC_SECTION(stem) {
      INFO(stem);
      const wb::BuildResult built = wb::BuildPodGroup(LoadJson(stem + "-stored-workload.json"),
                                                      LoadJson(stem + "-replicaset.json"));
      REQUIRE(built.ok());
      CHECK(built.object == LoadJson(stem + "-podgroup.json"));
    }
  }
}

TEST_CASE("BuildPodGroup copies priority fields and minCount from the template", "[unit]") {
  json workload = LoadJson("workloadbuilder/kep-example-1-stored-workload.json");
  json& pgt = workload["spec"]["podGroupTemplates"][0];
  pgt["priorityClassName"] = "high";
  pgt["priority"] = 1000;
  pgt["schedulingPolicy"]["gang"]["minCount"] = 7;
  const wb::BuildResult built =
      wb::BuildPodGroup(workload, LoadJson("workloadbuilder/kep-example-1-replicaset.json"));
  REQUIRE(built.ok());
  CHECK(built.object["spec"]["priorityClassName"] == "high");
  CHECK(built.object["spec"]["priority"] == 1000);
  CHECK(built.object["spec"]["schedulingPolicy"]["gang"]["minCount"] == 7);
  const json& wl_owner = built.object["metadata"]["ownerReferences"][1];
  CHECK_FALSE(wl_owner.contains("controller"));
  CHECK_FALSE(wl_owner.contains("blockOwnerDeletion"));
}

TEST_CASE("BuildPodGroup refuses incomplete inputs", "[unit]") {
  const json workload = LoadJson("workloadbuilder/kep-example-1-stored-workload.json");
  const json rs = LoadJson("workloadbuilder/kep-example-1-replicaset.json");
  json no_uid = rs;
  no_uid["metadata"].erase("uid");
  CHECK_FALSE(wb::BuildPodGroup(workload, no_uid).ok());
  json unsaved = workload;
  unsaved["metadata"].erase("uid");
  CHECK_FALSE(wb::BuildPodGroup(unsaved, rs).ok());
  json foreign = workload;
  foreign["spec"]["podGroupTemplates"][0]["name"] = "other";
  CHECK_FALSE(wb::BuildPodGroup(foreign, rs).ok());
  CHECK_FALSE(wb::BuildPodGroup(json(5), json("x")).ok());
}

TEST_CASE("BuildWorkload refuses an owner without name or uid", "[unit]") {
  json deployment = LoadJson("workloadbuilder/kep-example-2-deployment.json");
  const json config = ConfigOf(deployment);
  json no_uid = deployment;
  no_uid["metadata"].erase("uid");
  const wb::BuildResult r = wb::BuildWorkload(no_uid, config);
  CHECK_FALSE(r.ok());
  CHECK(r.object.is_null());
  CHECK(r.error.find("owned by its controller") != std::string::npos);
  json no_name = deployment;
  no_name["metadata"]["name"] = "";
  CHECK_FALSE(wb::BuildWorkload(no_name, config).ok());
  CHECK_FALSE(wb::BuildWorkload(deployment, json::array()).ok());
  CHECK_FALSE(wb::BuildWorkload(json(nullptr), config).ok());
}

TEST_CASE("minCount resolution (explicit, replicas, 1 at zero)", "[unit]") {
  const json gang = json::parse(R"({"schedulingPolicy":{"gang":{}}})");
  const json explicit4 = json::parse(R"({"schedulingPolicy":{"gang":{"minCount":4}}})");
  const json basic = json::parse(R"({"schedulingPolicy":{"basic":{}}})");
  CHECK(wb::IsGang(gang));
  CHECK(wb::IsGang(explicit4));
  CHECK_FALSE(wb::IsGang(basic));
  CHECK_FALSE(wb::IsGang(json::object()));
  CHECK_FALSE(wb::IsGang(json("gang")));
  CHECK_FALSE(wb::ExplicitMinCount(gang));
  CHECK(wb::ExplicitMinCount(explicit4) == 4);
  CHECK_FALSE(
      wb::ExplicitMinCount(json::parse(R"({"schedulingPolicy":{"gang":{"minCount":"4"}}})")));
  CHECK(wb::ResolveMinCount(gang, 5) == 5);
  CHECK(wb::ResolveMinCount(gang, 0) == 1);
  CHECK(wb::ResolveMinCount(explicit4, 9) == 4);
  CHECK(wb::ResolveMinCount(explicit4, 0) == 4);
}

TEST_CASE("BuildWorkload: basic, zero replicas, defaults, priority option", "[unit]") {
  json deployment = LoadJson("workloadbuilder/kep-example-1-deployment.json");
  deployment["spec"]["replicas"] = 0;
  const json gang = json::parse(R"({"schedulingPolicy":{"gang":{}}})");
  wb::BuildResult r = wb::BuildWorkload(deployment, gang);
  REQUIRE(r.ok());
  const json& pgt = r.object["spec"]["podGroupTemplates"][0];
  CHECK(pgt["schedulingPolicy"] == json::parse(R"({"gang":{"minCount":1}})"));
  CHECK_FALSE(pgt.contains("priorityClassName"));
  CHECK_FALSE(pgt.contains("resourceClaims"));

  deployment["spec"].erase("replicas");  // the API default is 1
  r = wb::BuildWorkload(deployment, gang);
  CHECK(r.object["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 1);

  wb::BuildOptions options;
  options.priority_class_name = "batch-high";
  r = wb::BuildWorkload(deployment, json::parse(R"({"resourceClaims":[]})"), options);
  REQUIRE(r.ok());
  const json& basic = r.object["spec"]["podGroupTemplates"][0];
  CHECK(basic["schedulingPolicy"] == json::parse(R"({"basic":{}})"));
  CHECK(basic["priorityClassName"] == "batch-high");
  CHECK_FALSE(basic.contains("priority"));
  CHECK_FALSE(basic.contains("resourceClaims"));
  CHECK(basic["name"] == "pgt-0");
}
