// ValidateDeploymentCreate: H1–H3 and H5 with passing and failing rows for
// both readings (wasd's annotation; spec.scheduling judged by the KEP's rules
// for the in-tree integration), carrier errors, and golden message text.
#include "rules/deployment_rules.h"

#include <string>

#include <catch2/catch.hpp>

#include "tests/rules/rules_fixtures.h"

using nlohmann::json;
using wasd::testing::AtCarrier;
using wasd::testing::BaseDeployment;
using wasd::testing::ExpectedErrors;
using wasd::testing::Via;
using wasd::testing::WithConfig;
using wasd::workloadbuilder::ErrorType;

namespace {

struct Row {
  const char* rule;
  const char* config;
  std::function<void(json&)> edit;  // applied to the base Deployment
  ExpectedErrors expected;          // "P…" paths are carrier-relative
};

void NoEdit(json&) {}

// clang-format off
const std::vector<Row> kRows = {
    // H1: explicit minCount ≤ replicas (3 in the base), replicas 0 allowed (Q5).
    {"H1 pass (equal)", R"({"schedulingPolicy":{"gang":{"minCount":3}}})", NoEdit, {}},
    {"H1 pass (below)", R"({"schedulingPolicy":{"gang":{"minCount":2}}})", NoEdit, {}},
    {"H1 pass (zero replicas)", R"({"schedulingPolicy":{"gang":{"minCount":4}}})",
     [](json& d) { d["spec"]["replicas"] = 0; }, {}},
    {"H1 pass (derived)", R"({"schedulingPolicy":{"gang":{}}})", NoEdit, {}},
    {"H1 fail", R"({"schedulingPolicy":{"gang":{"minCount":4}}})", NoEdit,
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    {"H1 fail (one replica)", R"({"schedulingPolicy":{"gang":{"minCount":2}}})",
     [](json& d) { d["spec"]["replicas"] = 1; },
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    // H2: gang needs Recreate.
    {"H2 pass", R"({"schedulingPolicy":{"gang":{}}})", NoEdit, {}},
    {"H2 pass (basic rolls)", R"({"schedulingPolicy":{"basic":{}}})",
     [](json& d) { d["spec"]["strategy"] = {{"type", "RollingUpdate"}}; }, {}},
    {"H2 fail", R"({"schedulingPolicy":{"gang":{}}})",
     [](json& d) { d["spec"]["strategy"] = {{"type", "RollingUpdate"}}; },
     {{ErrorType::kInvalid, "spec.strategy.type"}}},
    {"H2 fail (strategy omitted)", R"({"schedulingPolicy":{"gang":{}}})",
     [](json& d) { d["spec"].erase("strategy"); }, {{ErrorType::kInvalid, "spec.strategy.type"}}},
    // H3: no pre-set scheduling group in the pod template.
    {"H3 pass", R"({})", NoEdit, {}},
    {"H3 fail", R"({})",
     [](json& d) { d["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}}; },
     {{ErrorType::kForbidden, "spec.template.spec.schedulingGroup"}}},
    // Structural rules run too.
    {"S4 via create", R"({"schedulingPolicy":{"gang":{"minCount":0}}})", NoEdit,
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    {"B1 via create", R"({"disruptionMode":{"all":{}}})", NoEdit,
     {{ErrorType::kInvalid, "P.disruptionMode"}}},
    {"H1+H2 together", R"({"schedulingPolicy":{"gang":{"minCount":5}}})",
     [](json& d) { d["spec"]["strategy"] = {{"type", "RollingUpdate"}}; },
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"},
      {ErrorType::kInvalid, "spec.strategy.type"}}},
};
// clang-format on

}  // namespace

// Each row, and each carrier of a row, runs in its own section, so a failing
// row does not hide the rows after it. The index keeps section names unique.
TEST_CASE("Create rules H1-H3: every row, both carriers", "[unit]") {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    const Row& row = kRows[i];
    DYNAMIC_SECTION("row " << i << ": " << row.rule) {
      for (Via via : {Via::kField, Via::kAnnotation}) {
        DYNAMIC_SECTION("via " << wasd::testing::ViaName(via)) {
          json d = WithConfig(BaseDeployment(), via, row.config);
          row.edit(d);
          INFO(row.rule << " via " << wasd::testing::ViaName(via));
          WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentCreate(d),
                              AtCarrier(row.expected, via));
        }
      }
    }
  }
}

TEST_CASE("No carrier: no rule applies", "[unit]") {
  json d = BaseDeployment();
  d["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  d["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
  CHECK(wasd::rules::ValidateDeploymentCreate(d).empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(json(nullptr)).empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(json::array()).empty());
}

TEST_CASE("H5: spec.scheduling and the annotation together are denied (Q22)", "[unit]") {
  // spec.scheduling is kube-controller-manager's, the annotation wasd's: one
  // Deployment cannot have both, equal or not.
  for (const char* annotation :
       {"schedulingPolicy:\n  gang: {}\n", R"({"schedulingPolicy":{"basic":{}}})"}) {
    INFO(annotation);
    json d = WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{}}})");
    d = WithConfig(d, Via::kAnnotation, annotation);
    const auto errors = wasd::rules::ValidateDeploymentCreate(d);
    WASD_REQUIRE_ERRORS(errors, {{ErrorType::kForbidden, "spec.scheduling"}});
    CHECK(wasd::workloadbuilder::AggregateMessage(errors) ==
          "spec.scheduling: Forbidden: may not be set together with "
          "metadata.annotations[wasd.io/scheduling]: spec.scheduling hands the Deployment to "
          "kube-controller-manager (WorkloadWithDeployment), the annotation to wasd, and one "
          "Deployment cannot have both. Keep one: remove the annotation to leave it to the "
          "in-tree controller, or remove spec.scheduling to keep wasd; `wasd migrate "
          "deployment/inference-server` hands a wasd Deployment over to the in-tree controller");
  }
}

TEST_CASE("Annotation carrier problems are reported at the annotation", "[unit]") {
  for (const char* text : {"", "[1]", "{not json", "gang", "a: [", "42"}) {
    DYNAMIC_SECTION("annotation " << json(text).dump()) {
      INFO(text);
      json d = WithConfig(BaseDeployment(), Via::kAnnotation, text);
      WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentCreate(d),
                          {{ErrorType::kInvalid, "metadata.annotations[wasd.io/scheduling]"}});
    }
  }
  // A broken carrier still counts as "set" for H3. (In a section of its own:
  // code outside the sections above would run once per section.)
  SECTION("broken carrier with H3") {
    json d = WithConfig(BaseDeployment(), Via::kAnnotation, "");
    d["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
    WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentCreate(d),
                        {{ErrorType::kInvalid, "metadata.annotations[wasd.io/scheduling]"},
                         {ErrorType::kForbidden, "spec.template.spec.schedulingGroup"}});
  }
}

TEST_CASE("S17 applies to the annotation only", "[unit]") {
  const char* config = R"({"schedulingPolicy":{"gang":{"minCount":"3"}},"extra":true})";
  WASD_REQUIRE_ERRORS(
      wasd::rules::ValidateDeploymentCreate(WithConfig(BaseDeployment(), Via::kAnnotation, config)),
      {{ErrorType::kInvalid, "metadata.annotations[wasd.io/scheduling]"},
       {ErrorType::kInvalid,
        "metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount"}});
  CHECK(wasd::rules::ValidateDeploymentCreate(WithConfig(BaseDeployment(), Via::kField, config))
            .empty());
}

TEST_CASE("Golden create messages", "[unit]") {
  json d = WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{}}})");
  d["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  CHECK(wasd::workloadbuilder::AggregateMessage(wasd::rules::ValidateDeploymentCreate(d)) ==
        "spec.strategy.type: Invalid value: \"RollingUpdate\": gang scheduling requires Recreate; "
        "RollingUpdate is also the default when spec.strategy is omitted");

  json two = WithConfig(BaseDeployment(), Via::kAnnotation,
                        R"({"schedulingPolicy":{"gang":{"minCount":4}}})");
  two["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  CHECK(wasd::workloadbuilder::AggregateMessage(wasd::rules::ValidateDeploymentCreate(two)) ==
        "[metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount: Invalid value: "
        "4: must be less than or equal to spec.replicas (3), spec.strategy.type: Invalid value: "
        "\"RollingUpdate\": gang scheduling requires Recreate; RollingUpdate is also the default "
        "when spec.strategy is omitted]");

  json h3 = WithConfig(BaseDeployment(), Via::kField, "{}");
  h3["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
  CHECK(
      wasd::workloadbuilder::AggregateMessage(wasd::rules::ValidateDeploymentCreate(h3)) ==
      "spec.template.spec.schedulingGroup: Forbidden: may not be set when spec.scheduling is set");
  // H3 names the carrier the user wrote.
  json h3_annotation = WithConfig(BaseDeployment(), Via::kAnnotation, "{}");
  h3_annotation["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
  CHECK(wasd::workloadbuilder::AggregateMessage(
            wasd::rules::ValidateDeploymentCreate(h3_annotation)) ==
        "spec.template.spec.schedulingGroup: Forbidden: may not be set when "
        "metadata.annotations[wasd.io/scheduling] is set");
}

// An annotation user never wrote spec.scheduling: no create error names it.
TEST_CASE("Create errors via the annotation never name spec.scheduling", "[unit]") {
  for (const Row& row : kRows) {
    json d = WithConfig(BaseDeployment(), Via::kAnnotation, row.config);
    row.edit(d);
    INFO(row.rule);
    const std::string text =
        wasd::workloadbuilder::AggregateMessage(wasd::rules::ValidateDeploymentCreate(d));
    CHECK_FALSE(wasd::testing::NamesFieldCarrier(text));
  }
}

TEST_CASE("Odd Deployments never throw", "[unit]") {
  const json odd[] = {
      json{{"metadata", {{"annotations", {{"wasd.io/scheduling", "{}"}}}}}, {"spec", 5}},
      json{{"metadata", {{"annotations", {{"wasd.io/scheduling", "{}"}}}}},
           {"spec", {{"replicas", "3"}, {"strategy", 1}, {"template", {{"spec", 2}}}}}},
      json{{"spec",
            {{"scheduling", {{"schedulingPolicy", {{"gang", {{"minCount", 9}}}}}}},
             {"replicas", -1}}}},
  };
  for (const json& d : odd) {
    INFO(d.dump());
    CHECK_NOTHROW(wasd::rules::ValidateDeploymentCreate(d));
    CHECK_NOTHROW(wasd::rules::ValidateDeploymentUpdate(d, BaseDeployment()));
    CHECK_NOTHROW(wasd::rules::ValidateDeploymentUpdate(BaseDeployment(), d));
    CHECK_NOTHROW(wasd::rules::DeploymentWarnings(d));
    CHECK_NOTHROW(wasd::rules::ValidateScaleUpdate(d, d));
  }
}
