// ValidateDeploymentUpdate: U1–U9 with passing and failing rows for both
// carriers, and ratcheting.
#include "rules/deployment_rules.h"

#include <optional>
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
  const char* old_config;  // nullptr: no carrier
  const char* new_config;  // nullptr: no carrier
  ExpectedErrors expected;
};

json Deployment(const char* config, Via via) {
  return config == nullptr ? BaseDeployment() : WithConfig(BaseDeployment(), via, config);
}

constexpr const char* kGang3 = R"({"schedulingPolicy":{"gang":{"minCount":3}}})";
constexpr const char* kBasic = R"({"schedulingPolicy":{"basic":{}}})";
constexpr const char* kZone =
    R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"zone"}]}})";
constexpr const char* kClaimA =
    R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})";

// clang-format off
const std::vector<Row> kRows = {
    {"U1 pass (no carrier either side)", nullptr, nullptr, {}},
    {"U1 fail", nullptr, "{}", {{ErrorType::kForbidden, "P"}}},
    {"U2 pass", "{}", "{}", {}},
    {"U2 fail", "{}", nullptr, {{ErrorType::kForbidden, "P"}}},
    {"U3 pass", kBasic, kBasic, {}},
    {"U3 fail (set)", "{}", kBasic, {{ErrorType::kForbidden, "P.schedulingPolicy"}}},
    {"U3 fail (cleared)", kBasic, "{}", {{ErrorType::kForbidden, "P.schedulingPolicy"}}},
    {"U4/U5 fail (basic to gang)", kBasic, kGang3,
     {{ErrorType::kForbidden, "P.schedulingPolicy.basic"},
      {ErrorType::kForbidden, "P.schedulingPolicy.gang"}}},
    {"U4/U5 fail (gang to basic)", kGang3, kBasic,
     {{ErrorType::kForbidden, "P.schedulingPolicy.basic"},
      {ErrorType::kForbidden, "P.schedulingPolicy.gang"}}},
    // U4/U5 alone: only one member of the policy added or removed. Adding one
    // next to the other also breaks S3 on the new object.
    {"U4 pass (basic absent on both sides)", R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{"minCount":2}}})", {}},
    {"U4 fail alone (basic added next to gang)", R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"basic":{},"gang":{}}})",
     {{ErrorType::kInvalid, "P.schedulingPolicy"},
      {ErrorType::kForbidden, "P.schedulingPolicy.basic"}}},
    {"U4 fail alone (basic removed, gang kept)", R"({"schedulingPolicy":{"basic":{},"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{}}})", {{ErrorType::kForbidden, "P.schedulingPolicy.basic"}}},
    {"U5 pass (gang kept, minCount changed)", kGang3,
     R"({"schedulingPolicy":{"gang":{"minCount":1}}})", {}},
    {"U5 fail alone (gang added next to basic)", kBasic,
     R"({"schedulingPolicy":{"basic":{},"gang":{}}})",
     {{ErrorType::kInvalid, "P.schedulingPolicy"},
      {ErrorType::kForbidden, "P.schedulingPolicy.gang"}}},
    {"U5 fail alone (gang removed, basic kept)", R"({"schedulingPolicy":{"basic":{},"gang":{}}})",
     kBasic, {{ErrorType::kForbidden, "P.schedulingPolicy.gang"}}},
    {"U6 pass (lowered)", kGang3, R"({"schedulingPolicy":{"gang":{"minCount":2}}})", {}},
    {"U6 pass (unset)", kGang3, R"({"schedulingPolicy":{"gang":{}}})", {}},
    {"U6 pass (set)", R"({"schedulingPolicy":{"gang":{}}})", kGang3, {}},
    {"U6 still H1", kGang3, R"({"schedulingPolicy":{"gang":{"minCount":4}}})",
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    {"U6 still S4", kGang3, R"({"schedulingPolicy":{"gang":{"minCount":0}}})",
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    {"U7 pass", kZone, kZone, {}},
    {"U7 fail (changed)", kZone,
     R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"rack"}]}})",
     {{ErrorType::kForbidden, "P.schedulingConstraints"}}},
    {"U7 fail (added)", R"({"schedulingPolicy":{"gang":{}}})", kZone,
     {{ErrorType::kForbidden, "P.schedulingConstraints"}}},
    {"U7 fail (removed)", kZone, R"({"schedulingPolicy":{"gang":{}}})",
     {{ErrorType::kForbidden, "P.schedulingConstraints"}}},
    {"U7 fail (absent object != {})", R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{}})",
     {{ErrorType::kForbidden, "P.schedulingConstraints"}}},
    {"U8 pass", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})", {}},
    {"U8 fail", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
     {{ErrorType::kForbidden, "P.disruptionMode"}}},
    {"U8 fail (added)", R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
     {{ErrorType::kForbidden, "P.disruptionMode"}}},
    {"U8 fail (removed)", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
     R"({"schedulingPolicy":{"gang":{}}})", {{ErrorType::kForbidden, "P.disruptionMode"}}},
    {"U9 pass", kClaimA, kClaimA, {}},
    {"U9 pass (absent list == [])", R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[]})", {}},
    {"U9 fail (renamed)", kClaimA,
     R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"b","resourceClaimName":"x"}]})",
     {{ErrorType::kForbidden, "P.resourceClaims"}}},
    {"U9 fail (added)", R"({"schedulingPolicy":{"gang":{}}})", kClaimA,
     {{ErrorType::kForbidden, "P.resourceClaims"}}},
    {"U9 fail (removed)", kClaimA, R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[]})",
     {{ErrorType::kForbidden, "P.resourceClaims"}}},
    // Union ratcheting (§b.0): a union already broken in the stored object is
    // not re-checked while its membership stays; a change of membership is.
    {"union ratchet pass (stored basic+gang, minCount changed)",
     R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":3}}})",
     R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":2}}})", {}},
    {"union ratchet pass (stored empty disruptionMode, minCount changed)",
     R"({"schedulingPolicy":{"gang":{"minCount":3}},"disruptionMode":{}})",
     R"({"schedulingPolicy":{"gang":{"minCount":2}},"disruptionMode":{}})", {}},
    {"union ratchet pass (stored claim with both sources, minCount changed)",
     R"({"schedulingPolicy":{"gang":{"minCount":3}},"resourceClaims":[{"name":"a","resourceClaimName":"x","resourceClaimTemplateName":"y"}]})",
     R"({"schedulingPolicy":{"gang":{"minCount":2}},"resourceClaims":[{"name":"a","resourceClaimName":"x","resourceClaimTemplateName":"y"}]})",
     {}},
    {"union ratchet fail (membership changed: disruptionMode emptied)",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{}})",
     {{ErrorType::kInvalid, "P.disruptionMode"}, {ErrorType::kForbidden, "P.disruptionMode"}}},
    {"union ratchet fail (stored basic+gang, other rule broken: H1 still reported)",
     R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":3}}})",
     R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":300}}})",
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
};
// clang-format on

}  // namespace

// Each row, and each carrier of a row, runs in its own section, so a failing
// row does not hide the rows after it. The index keeps section names unique.
TEST_CASE("Update rules U1-U9: every row, both carriers", "[unit]") {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    const Row& row = kRows[i];
    DYNAMIC_SECTION("row " << i << ": " << row.rule) {
      for (Via via : {Via::kField, Via::kAnnotation}) {
        DYNAMIC_SECTION("via " << wasd::testing::ViaName(via)) {
          INFO(row.rule << " via " << wasd::testing::ViaName(via));
          WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(
                                  Deployment(row.new_config, via), Deployment(row.old_config, via)),
                              AtCarrier(row.expected, via));
        }
      }
    }
  }
}

TEST_CASE("Golden update messages", "[unit]") {
  const auto message = [](const json& now, const json& old) {
    return wasd::workloadbuilder::AggregateMessage(wasd::rules::ValidateDeploymentUpdate(now, old));
  };
  // U1/U2: opting in or out names the carrier the user wrote and the way to do it.
  CHECK(message(Deployment("{}", Via::kAnnotation), BaseDeployment()) ==
        "metadata.annotations[wasd.io/scheduling]: Forbidden: field cannot be set once created; "
        "to opt an existing Deployment in, delete it and create it again with the "
        "wasd.io/scheduling annotation");
  CHECK(message(BaseDeployment(), Deployment("{}", Via::kAnnotation)) ==
        "metadata.annotations[wasd.io/scheduling]: Forbidden: field cannot be cleared once set; "
        "to opt a Deployment out, delete it and create it again without the wasd.io/scheduling "
        "annotation");
  CHECK(message(Deployment("{}", Via::kField), BaseDeployment()) ==
        "spec.scheduling: Forbidden: field cannot be set once created; to opt an existing "
        "Deployment in, delete it and create it again with spec.scheduling");
  CHECK(message(BaseDeployment(), Deployment("{}", Via::kField)) ==
        "spec.scheduling: Forbidden: field cannot be cleared once set; to opt a Deployment out, "
        "delete it and create it again without spec.scheduling");
  const std::string recreate =
      ": only gang.minCount can change in an existing Deployment; delete the Deployment and "
      "create it again to change this";
  CHECK(message(Deployment(kGang3, Via::kField), Deployment(kBasic, Via::kField)) ==
        "[spec.scheduling.schedulingPolicy.basic: Forbidden: field is immutable" + recreate +
            ", spec.scheduling.schedulingPolicy.gang: Forbidden: field cannot be set once "
            "created" +
            recreate + "]");
  // U5 in the other direction: gang cleared (and U4: basic added), via the annotation.
  CHECK(message(Deployment(kBasic, Via::kAnnotation), Deployment(kGang3, Via::kAnnotation)) ==
        "[metadata.annotations[wasd.io/scheduling].schedulingPolicy.basic: Forbidden: field is "
        "immutable" +
            recreate +
            ", metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang: Forbidden: field "
            "cannot be cleared once set" +
            recreate + "]");
  // U5 alone, gang cleared next to a kept basic.
  CHECK(message(Deployment(kBasic, Via::kField),
                Deployment(R"({"schedulingPolicy":{"basic":{},"gang":{}}})", Via::kField)) ==
        "spec.scheduling.schedulingPolicy.gang: Forbidden: field cannot be cleared once set" +
            recreate);
  // U3: schedulingPolicy set or cleared.
  CHECK(message(Deployment(kBasic, Via::kAnnotation), Deployment("{}", Via::kAnnotation)) ==
        "metadata.annotations[wasd.io/scheduling].schedulingPolicy: Forbidden: field cannot be set "
        "once created" +
            recreate);
  CHECK(message(Deployment("{}", Via::kField), Deployment(kBasic, Via::kField)) ==
        "spec.scheduling.schedulingPolicy: Forbidden: field cannot be cleared once set" + recreate);
  // U7, U8, U9: the whole member is immutable.
  CHECK(message(Deployment(R"({"schedulingPolicy":{"gang":{}},
                               "schedulingConstraints":{"topology":[{"key":"rack"}]}})",
                           Via::kAnnotation),
                Deployment(kZone, Via::kAnnotation)) ==
        "metadata.annotations[wasd.io/scheduling].schedulingConstraints: Forbidden: field is "
        "immutable" +
            recreate);
  CHECK(message(Deployment(R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
                           Via::kAnnotation),
                Deployment(R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
                           Via::kAnnotation)) ==
        "metadata.annotations[wasd.io/scheduling].disruptionMode: Forbidden: field is immutable" +
            recreate);
  CHECK(message(Deployment(R"({"schedulingPolicy":{"gang":{}},
                               "resourceClaims":[{"name":"b","resourceClaimName":"x"}]})",
                           Via::kAnnotation),
                Deployment(kClaimA, Via::kAnnotation)) ==
        "metadata.annotations[wasd.io/scheduling].resourceClaims: Forbidden: field is immutable" +
            recreate);
  CHECK(message(Deployment(R"({"schedulingPolicy":{"gang":{}},
                               "resourceClaims":[{"name":"b","resourceClaimName":"x"}]})",
                           Via::kField),
                Deployment(kClaimA, Via::kField)) ==
        "spec.scheduling.resourceClaims: Forbidden: field is immutable" + recreate);
}

// Every failing row, through either carrier: the annotation user never reads
// spec.scheduling, and no update error prints a null value it did not write.
TEST_CASE("Update errors name the carrier written and never print null", "[unit]") {
  for (const Row& row : kRows) {
    if (row.expected.empty()) continue;
    for (Via via : {Via::kField, Via::kAnnotation}) {
      INFO(row.rule << " via " << wasd::testing::ViaName(via));
      const std::string text =
          wasd::workloadbuilder::AggregateMessage(wasd::rules::ValidateDeploymentUpdate(
              Deployment(row.new_config, via), Deployment(row.old_config, via)));
      CHECK(text.find("Invalid value: \"null\"") == std::string::npos);
      if (via == Via::kAnnotation) CHECK_FALSE(wasd::testing::NamesFieldCarrier(text));
    }
  }
}

TEST_CASE("U4/U5 pass: the policy kept while another rule input changes", "[unit]") {
  // The configuration cannot change while basic is kept, so the rules are
  // made to run by a changed spec.replicas (ratcheting would skip them).
  for (Via via : {Via::kField, Via::kAnnotation}) {
    DYNAMIC_SECTION("via " << wasd::testing::ViaName(via)) {
      for (const char* config : {kBasic, R"({"schedulingPolicy":{"gang":{}}})"}) {
        INFO(config);
        const json old = Deployment(config, via);
        json now = old;
        now["spec"]["replicas"] = 4;
        CHECK(wasd::rules::ValidateDeploymentUpdate(now, old).empty());
      }
    }
  }
}

TEST_CASE("H5 on update: an annotation next to spec.scheduling is denied", "[unit]") {
  const char* gang = R"({"schedulingPolicy":{"gang":{}}})";
  const json field_only = Deployment(gang, Via::kField);
  const json both_same =
      WithConfig(field_only, Via::kAnnotation, "schedulingPolicy:\n  gang: {}\n");
  const ExpectedErrors h5 = {{ErrorType::kForbidden, "spec.scheduling"}};
  // An annotation added next to the field, even an equal one.
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(both_same, field_only), h5);
  // A stored pair is not denied on an update that changes none of the rules' inputs...
  json relabelled = both_same;
  relabelled["metadata"]["labels"]["team"] = "ml";
  CHECK(wasd::rules::ValidateDeploymentUpdate(relabelled, both_same).empty());
  // ...but on one that does.
  json scaled = both_same;
  scaled["spec"]["replicas"] = 4;
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(scaled, both_same), h5);
}

TEST_CASE("Switching carriers with the same config is not a change", "[unit]") {
  const json old = Deployment(kZone, Via::kAnnotation);
  const json now = Deployment(kZone, Via::kField);
  CHECK(wasd::rules::ValidateDeploymentUpdate(now, old).empty());
  CHECK(wasd::rules::ValidateDeploymentUpdate(old, now).empty());
}

TEST_CASE("A broken stored annotation can be repaired", "[unit]") {
  const json old = Deployment("{oops", Via::kAnnotation);
  CHECK(wasd::rules::ValidateDeploymentUpdate(Deployment(kGang3, Via::kAnnotation), old).empty());
  // ...and an unchanged broken one does not block other updates.
  json touched = old;
  touched["metadata"]["annotations"]["note"] = "x";
  CHECK(wasd::rules::ValidateDeploymentUpdate(touched, old).empty());
}

TEST_CASE("An UPDATE admitted with an unusable stored annotation says the rollout gets no gang",
          "[unit]") {
  // Stored past the webhook (or under an older release): an image change is
  // admitted, but the reconciler cannot use the configuration, so the new
  // ReplicaSet's pods are released one by one. Said at the UPDATE.
  const json old = Deployment(R"({"schedulingPolicy":3})", Via::kAnnotation);
  json image = old;
  image["spec"]["template"]["spec"]["containers"] = json::array({{{"name", "c"}, {"image", "v2"}}});
  const wasd::rules::DeploymentReview r = wasd::rules::ReviewDeploymentUpdate(image, old);
  CHECK(r.errors.empty());
  REQUIRE_FALSE(r.warnings.empty());
  CHECK(r.warnings.front() ==
        "wasd.io/scheduling: the stored configuration is not usable "
        "(metadata.annotations[wasd.io/scheduling].schedulingPolicy: Invalid value: 3: must be an "
        "object), so wasd manages no gang for this Deployment: new pods of this rollout get no "
        "gang: fix the annotation");
  // An unparseable one too; a usable one gets no such warning.
  const json broken = Deployment("{oops", Via::kAnnotation);
  json touched = broken;
  touched["metadata"]["annotations"]["note"] = "x";
  const auto w = wasd::rules::ReviewDeploymentUpdate(touched, broken).warnings;
  REQUIRE(w.size() >= 1);
  CHECK_THAT(w.front(),
             Catch::Contains("new pods of this rollout get no gang: fix the annotation"));
  const json good = Deployment(kGang3, Via::kAnnotation);
  for (const std::string& text : wasd::rules::ReviewDeploymentUpdate(good, good).warnings) {
    CHECK_THAT(text, !Catch::Contains("get no gang"));
  }
}

TEST_CASE("Ratcheting: controller-style updates of an invalid object pass", "[unit]") {
  for (Via via : {Via::kField, Via::kAnnotation}) {
    DYNAMIC_SECTION("via " << wasd::testing::ViaName(via)) {
      INFO(wasd::testing::ViaName(via));
      // Invalid by today's rules: minCount above replicas, gang with RollingUpdate,
      // a pre-set scheduling group.
      json old = Deployment(R"({"schedulingPolicy":{"gang":{"minCount":5}}})", via);
      old["spec"]["strategy"] = {{"type", "RollingUpdate"}};
      old["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
      REQUIRE(wasd::rules::ValidateDeploymentCreate(old).size() == 3);

      json now = old;
      now["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "2";
      now["metadata"]["resourceVersion"] = "1001";
      now["status"]["readyReplicas"] = 1;
      CHECK(wasd::rules::ValidateDeploymentUpdate(now, old).empty());

      json rescaled = now;
      rescaled["spec"]["replicas"] = 4;  // a rule input changed: every rule runs
      WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(rescaled, old),
                          AtCarrier({{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"},
                                     {ErrorType::kInvalid, "spec.strategy.type"},
                                     {ErrorType::kForbidden, "spec.template.spec.schedulingGroup"}},
                                    via));
    }
  }
}

TEST_CASE("Ratcheting compares the annotation parsed, not textually", "[unit]") {
  json old = Deployment(R"({"schedulingPolicy":{"gang":{"minCount":5}}})", Via::kAnnotation);
  json now = old;
  now["metadata"]["annotations"]["wasd.io/scheduling"] =
      "schedulingPolicy:\n  gang:\n    minCount: 5\n";
  CHECK(wasd::rules::ValidateDeploymentUpdate(now, old).empty());
  now["metadata"]["annotations"]["wasd.io/scheduling"] =
      "schedulingPolicy:\n  gang:\n    minCount: 6\n";
  WASD_REQUIRE_ERRORS(
      wasd::rules::ValidateDeploymentUpdate(now, old),
      {{ErrorType::kInvalid,
        "metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount"}});
}

TEST_CASE("Each ratchet input alone re-runs the rules", "[unit]") {
  const json old = Deployment(R"({"schedulingPolicy":{"gang":{}}})", Via::kField);
  json strategy = old;
  strategy["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(strategy, old),
                      {{ErrorType::kInvalid, "spec.strategy.type"}});
  json group = old;
  group["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(group, old),
                      {{ErrorType::kForbidden, "spec.template.spec.schedulingGroup"}});
  json image = old;
  image["spec"]["template"]["spec"]["containers"][0]["image"] = "inference-server:v2";
  CHECK(wasd::rules::ValidateDeploymentUpdate(image, old).empty());
}
