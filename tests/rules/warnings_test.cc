#include "rules/deployment_rules.h"

#include <catch2/catch.hpp>

#include "tests/rules/rules_fixtures.h"

using nlohmann::json;
using wasd::testing::BaseDeployment;
using wasd::testing::Via;
using wasd::testing::WithConfig;
using Warnings = std::vector<std::string>;

TEST_CASE("Warning when gang minCount is derived", "[unit]") {
  json d = WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}}})");
  CHECK(wasd::rules::DeploymentWarnings(d) ==
        Warnings{"gang minCount not set: derived from spec.replicas (3)"});
  d["spec"]["replicas"] = 0;
  CHECK(wasd::rules::DeploymentWarnings(d) ==
        Warnings{
            "gang minCount not set: 1 while spec.replicas is 0, then derived from spec.replicas"});
  CHECK(
      wasd::rules::DeploymentWarnings(WithConfig(BaseDeployment(), Via::kField,
                                                 R"({"schedulingPolicy":{"gang":{"minCount":2}}})"))
          .empty());
  CHECK(wasd::rules::DeploymentWarnings(BaseDeployment()).empty());
  CHECK(
      wasd::rules::DeploymentWarnings(WithConfig(BaseDeployment(), Via::kAnnotation, "[")).empty());
}

TEST_CASE("Warnings for claims; all short", "[unit]") {
  const char* config =
      R"({"schedulingPolicy":{"gang":{"minCount":3}},"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})";
  json d = WithConfig(WithConfig(BaseDeployment(), Via::kField, config), Via::kAnnotation, config);
  // The template has no claim of its own: the group's claim is used by no pod.
  Warnings w = wasd::rules::DeploymentWarnings(d);
  REQUIRE(w.size() == 2);
  CHECK(w[0].find("DRAWorkloadResourceClaims") != std::string::npos);
  CHECK(w[1] ==
        "resourceClaims[0]: no equal claim in spec.template.spec.resourceClaims; no pod uses it");
  // An equal entry in the pod template (same name, same source) uses it.
  d["spec"]["template"]["spec"]["resourceClaims"] =
      json::array({{{"name", "a"}, {"resourceClaimName", "x"}}});
  w = wasd::rules::DeploymentWarnings(d);
  CHECK(w.size() == 1);
  // The same name with another source is not the group's claim.
  d["spec"]["template"]["spec"]["resourceClaims"] =
      json::array({{{"name", "a"}, {"resourceClaimTemplateName", "x"}}});
  CHECK(wasd::rules::DeploymentWarnings(d).size() == 2);
  d["spec"]["template"]["spec"]["resourceClaims"] = "not a list";
  CHECK(wasd::rules::DeploymentWarnings(d).size() == 2);
  d["spec"]["scheduling"]["schedulingPolicy"]["gang"].erase("minCount");
  d["metadata"]["annotations"]["wasd.io/scheduling"] = d["spec"]["scheduling"].dump();
  d["spec"]["replicas"] = 2147483647;
  for (const std::string& s : wasd::rules::DeploymentWarnings(d)) {
    INFO(s);
    CHECK(s.size() <= 120);
  }
}

// ReviewDeploymentCreate/Update carry the warnings DeploymentWarnings gives
// for the new object (read separately), and only when there are no errors;
// an admitted UPDATE of an unusable configuration has one more, first.
TEST_CASE("Review entry points: warnings as DeploymentWarnings, only when allowed", "[unit]") {
  using wasd::rules::DeploymentWarnings;
  const std::vector<json> objects = {
      BaseDeployment(),
      WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}}})"),
      WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{"minCount":2}}})"),
      WithConfig(BaseDeployment(), Via::kAnnotation,
                 R"({"schedulingPolicy":{"gang":{"minCount":9}}})"),
      WithConfig(
          BaseDeployment(), Via::kAnnotation,
          R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})"),
      WithConfig(BaseDeployment(), Via::kAnnotation, "["),
  };
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const json& d = objects[i];
    DYNAMIC_SECTION("create " << i) {
      const wasd::rules::DeploymentReview r = wasd::rules::ReviewDeploymentCreate(d);
      CHECK(r.warnings == (r.errors.empty() ? DeploymentWarnings(d) : Warnings{}));
    }
    for (std::size_t j = 0; j < objects.size(); ++j) {
      DYNAMIC_SECTION("update " << j << " -> " << i) {
        const wasd::rules::DeploymentReview r = wasd::rules::ReviewDeploymentUpdate(d, objects[j]);
        // An admitted UPDATE of the unusable configuration (the last object)
        // is told first that its rollout gets no gang.
        Warnings want = r.errors.empty() ? DeploymentWarnings(d) : Warnings{};
        if (r.errors.empty() && i == objects.size() - 1) {
          REQUIRE_FALSE(r.warnings.empty());
          CHECK_THAT(r.warnings.front(), Catch::Contains("new pods of this rollout get no gang"));
          want.insert(want.begin(), r.warnings.front());
        }
        CHECK(r.warnings == want);
      }
    }
  }
  // The table holds both kinds: allowed objects with warnings, and denied ones.
  CHECK(wasd::rules::ReviewDeploymentCreate(objects[1]).warnings.size() == 1);
  CHECK_FALSE(wasd::rules::ReviewDeploymentCreate(objects[3]).errors.empty());
  CHECK(wasd::rules::ReviewDeploymentCreate(objects[3]).warnings.empty());
  // The derived-minCount warning also comes on an unchanged UPDATE.
  CHECK(wasd::rules::ReviewDeploymentUpdate(objects[1], objects[1]).warnings ==
        Warnings{"gang minCount not set: derived from spec.replicas (3)"});
}
