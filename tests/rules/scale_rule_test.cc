// ValidateScaleUpdate (H4): explicit gang.minCount is a floor for /scale.
#include "rules/deployment_rules.h"

#include <catch2/catch.hpp>

#include "tests/rules/rules_fixtures.h"

using nlohmann::json;
using wasd::testing::BaseDeployment;
using wasd::testing::Via;
using wasd::testing::WithConfig;
using wasd::workloadbuilder::ErrorType;

namespace {

json Scale(std::optional<int> replicas) {
  json s = {{"apiVersion", "autoscaling/v1"},
            {"kind", "Scale"},
            {"metadata", {{"name", "inference-server"}, {"namespace", "ml-serving"}}},
            {"spec", json::object()},
            {"status", {{"replicas", 3}, {"selector", "app=inference-server"}}}};
  if (replicas) s["spec"]["replicas"] = *replicas;
  return s;
}

}  // namespace

TEST_CASE("H4: scaling below an explicit minCount is rejected", "[unit]") {
  for (Via via : {Via::kAnnotation}) {
    DYNAMIC_SECTION("via " << wasd::testing::ViaName(via)) {
      INFO(wasd::testing::ViaName(via));
      const json d =
          WithConfig(BaseDeployment(), via, R"({"schedulingPolicy":{"gang":{"minCount":3}}})");
      WASD_REQUIRE_ERRORS(wasd::rules::ValidateScaleUpdate(Scale(2), d),
                          {{ErrorType::kInvalid, "spec.replicas"}});
      WASD_REQUIRE_ERRORS(wasd::rules::ValidateScaleUpdate(Scale(1), d),
                          {{ErrorType::kInvalid, "spec.replicas"}});
      CHECK(wasd::rules::ValidateScaleUpdate(Scale(3), d).empty());
      CHECK(wasd::rules::ValidateScaleUpdate(Scale(10), d).empty());
      CHECK(wasd::rules::ValidateScaleUpdate(Scale(0), d).empty());             // Q5
      CHECK(wasd::rules::ValidateScaleUpdate(Scale(std::nullopt), d).empty());  // omitted = 0
    }
  }
}

TEST_CASE("H4 passes without an explicit minCount", "[unit]") {
  CHECK(wasd::rules::ValidateScaleUpdate(Scale(1), BaseDeployment()).empty());
  CHECK(wasd::rules::ValidateScaleUpdate(
            Scale(1),
            WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{}}})"))
            .empty());
  CHECK(wasd::rules::ValidateScaleUpdate(
            Scale(1),
            WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"basic":{}}})"))
            .empty());
  CHECK(wasd::rules::ValidateScaleUpdate(Scale(1),
                                         WithConfig(BaseDeployment(), Via::kAnnotation, "{bad"))
            .empty());
  CHECK(wasd::rules::ValidateScaleUpdate(Scale(1), json(nullptr)).empty());
}

TEST_CASE("H4 golden message names the carrier the user wrote", "[unit]") {
  const json annotation = WithConfig(BaseDeployment(), Via::kAnnotation,
                                     "schedulingPolicy:\n  gang:\n    minCount: 4\n");
  CHECK(wasd::workloadbuilder::AggregateMessage(
            wasd::rules::ValidateScaleUpdate(Scale(2), annotation)) ==
        "spec.replicas: Invalid value: 2: must be greater than or equal to "
        "metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount (4)");
}

TEST_CASE("H4 leaves spec.scheduling to the in-tree integration (Q22)", "[unit]") {
  // A Deployment with spec.scheduling alone is kube-controller-manager's:
  // wasd's scale check does not apply to it.
  const json field =
      WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{"minCount":4}}})");
  CHECK(wasd::rules::ValidateScaleUpdate(Scale(2), field).empty());
}

TEST_CASE("Scale ratchet: a write that keeps the replica count is never denied", "[unit]") {
  const json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                            R"({"schedulingPolicy":{"gang":{"minCount":3}}})");
  using wasd::rules::ScaleReplicasUnchanged;
  using wasd::rules::ValidateScaleUpdate;
  CHECK(ScaleReplicasUnchanged(Scale(2), Scale(2)));
  CHECK(ScaleReplicasUnchanged(Scale(std::nullopt), Scale(0)));  // omitted = 0
  CHECK(ScaleReplicasUnchanged(Scale(0), json(nullptr)));        // no stored Scale: 0
  CHECK_FALSE(ScaleReplicasUnchanged(Scale(2), Scale(4)));
  CHECK_FALSE(ScaleReplicasUnchanged(Scale(2), json(nullptr)));
  // Stored below the floor (e.g. created while the webhook was down): kept, allowed.
  CHECK(ValidateScaleUpdate(Scale(2), Scale(2), d).empty());
  // Changed: H4 decides.
  WASD_REQUIRE_ERRORS(ValidateScaleUpdate(Scale(2), Scale(4), d),
                      {{ErrorType::kInvalid, "spec.replicas"}});
  WASD_REQUIRE_ERRORS(ValidateScaleUpdate(Scale(1), json(nullptr), d),
                      {{ErrorType::kInvalid, "spec.replicas"}});
  CHECK(ValidateScaleUpdate(Scale(5), Scale(4), d).empty());
}
