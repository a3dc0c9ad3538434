// CheckSchedulingConfig (V6): the one "is this stored config usable and
// valid?" decision of the webhook and the planner, row by row for each
// carrier: absent, broken carrier, S-rule errors, S17 strictness (annotation
// alone) and ratcheting through the old configuration.
#include "rules/usable_config.h"

#include <catch2/catch.hpp>

#include "tests/rules/rules_fixtures.h"

using nlohmann::json;
using wasd::rules::CheckSchedulingConfig;
using wasd::rules::ConfigVerdict;
using wasd::testing::AtCarrier;
using wasd::testing::BaseDeployment;
using wasd::testing::ExpectedErrors;
using wasd::testing::Via;
using wasd::testing::WithConfig;
using wasd::workloadbuilder::ErrorType;

namespace {

namespace wb = wasd::workloadbuilder;

// wasd's annotation, else spec.scheduling (judged by the KEP's rules for
// the in-tree integration), as the rules' view reads them.
wb::SchedulingConfig ReadEither(const json& d) {
  return wb::HasSchedulingCarrier(d) ? wb::ReadSchedulingConfig(d)
                                     : wb::ReadInTreeSchedulingConfig(d);
}

struct Row {
  const char* name;
  Via via;
  const char* config;
  bool usable;
  ExpectedErrors expected;  // "P…" paths are carrier-relative
};

const std::vector<Row> kRows = {
    {"gang, annotation",
     Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{"minCount":2}}})",
     true,
     {}},
    {"gang, field", Via::kField, R"({"schedulingPolicy":{"gang":{"minCount":2}}})", true, {}},
    {"basic, annotation", Via::kAnnotation, R"({"schedulingPolicy":{"basic":{}}})", true, {}},
    {"empty object, field", Via::kField, R"({})", true, {}},
    // S4 on either carrier.
    {"minCount 0, annotation",
     Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{"minCount":0}}})",
     false,
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    {"minCount 0, field",
     Via::kField,
     R"({"schedulingPolicy":{"gang":{"minCount":0}}})",
     false,
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    // S17 (strict decoding) only for the annotation: the API server has
    // decoded spec.scheduling against its schema already.
    {"unknown field, annotation",
     Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{"x":1}}})",
     false,
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang"}}},
    {"unknown field, field", Via::kField, R"({"schedulingPolicy":{"gang":{"x":1}}})", true, {}},
    {"mistyped minCount, annotation",
     Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{"minCount":"2"}}})",
     false,
     {{ErrorType::kInvalid, "P.schedulingPolicy.gang.minCount"}}},
    // Carrier errors: nothing to validate further.
    {"unparseable annotation", Via::kAnnotation, "{", false, {{ErrorType::kInvalid, "P"}}},
    {"annotation not an object", Via::kAnnotation, "[1]", false, {{ErrorType::kInvalid, "P"}}},
    {"empty annotation", Via::kAnnotation, "", false, {{ErrorType::kInvalid, "P"}}},
};

TEST_CASE("CheckSchedulingConfig: usable and valid, per carrier", "[unit]") {
  for (const Row& row : kRows) {
    INFO(row.name << " (" << wasd::testing::ViaName(row.via) << ")");
    const json d = WithConfig(BaseDeployment(), row.via, row.config);
    const ConfigVerdict v = CheckSchedulingConfig(ReadEither(d));
    CHECK(v.usable == row.usable);
    WASD_REQUIRE_ERRORS(v.errors, AtCarrier(row.expected, row.via));
  }
}

TEST_CASE("CheckSchedulingConfig: no carrier is no verdict", "[unit]") {
  const ConfigVerdict v = CheckSchedulingConfig(ReadEither(BaseDeployment()));
  CHECK_FALSE(v.usable);
  CHECK(v.errors.empty());
}

TEST_CASE("CheckSchedulingConfig: the old configuration ratchets the policy union", "[unit]") {
  // Both members of the union set: refused on its own, kept when the stored
  // object already had them (an UPDATE that does not touch the union).
  const char* both = R"({"schedulingPolicy":{"gang":{},"basic":{}}})";
  const json d = WithConfig(BaseDeployment(), Via::kAnnotation, both);
  CHECK_FALSE(CheckSchedulingConfig(ReadEither(d)).usable);
  const json old = json::parse(both);
  const ConfigVerdict ratcheted = CheckSchedulingConfig(ReadEither(d), &old);
  CHECK(ratcheted.errors.empty());
  CHECK(ratcheted.usable);
}

}  // namespace
