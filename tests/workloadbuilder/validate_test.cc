// Table-driven tests of ValidateSchedulingConfig: every row of docs/api.md
// §b.1 (S2–S17) and §b.4 (B1) with passing and failing cases, for both
// carriers (the field carrier validates non-strictly, the annotation strictly).
#include "workloadbuilder/validate.h"

#include <catch2/catch.hpp>

#include "tests/workloadbuilder/error_matchers.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;
using wb::ErrorType;

namespace {

const wb::FieldPath kField = wb::FieldPath::Parse("spec.scheduling");
const wb::FieldPath kAnnotation =
    wb::FieldPath::Parse("metadata.annotations").Key("wasd.io/scheduling");

// Expected errors with paths relative to the carrier prefix P.
using RelErrors = std::vector<std::pair<ErrorType, std::string>>;

struct Row {
  const char* rule;
  const char* config;
  RelErrors expected;  // empty: the row must pass
};

wasd::testing::ExpectedErrors Rooted(const RelErrors& rel, const wb::FieldPath& prefix) {
  wasd::testing::ExpectedErrors out;
  for (const auto& [type, suffix] : rel) out.emplace_back(type, prefix.String() + suffix);
  return out;
}

// clang-format off
const std::vector<Row> kRows = {
    // S2 / S3: schedulingPolicy is a union of basic and gang.
    {"S2 pass", R"({"schedulingPolicy":{"gang":{}}})", {}},
    {"S2 fail", R"({"schedulingPolicy":{}})", {{ErrorType::kInvalid, ".schedulingPolicy"}}},
    {"S2 fail (null members)", R"({"schedulingPolicy":{"basic":null,"gang":null}})",
     {{ErrorType::kInvalid, ".schedulingPolicy"}}},
    {"S3 pass", R"({"schedulingPolicy":{"basic":{}}})", {}},
    {"S3 fail", R"({"schedulingPolicy":{"basic":{},"gang":{}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy"}}},
    // S4: minCount ≥ 1 when set.
    {"S4 pass", R"({"schedulingPolicy":{"gang":{"minCount":1}}})", {}},
    {"S4 pass (unset)", R"({"schedulingPolicy":{"gang":{"minCount":null}}})", {}},
    {"S4 fail (0)", R"({"schedulingPolicy":{"gang":{"minCount":0}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang.minCount"}}},
    {"S4 fail (-1)", R"({"schedulingPolicy":{"gang":{"minCount":-1}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang.minCount"}}},
    // S5: at most one topology entry.
    {"S5 pass", R"({"schedulingConstraints":{"topology":[{"key":"zone"}]}})", {}},
    {"S5 pass (empty list)", R"({"schedulingConstraints":{"topology":[]}})", {}},
    {"S5 fail", R"({"schedulingConstraints":{"topology":[{"key":"a"},{"key":"b"}]}})",
     {{ErrorType::kTooMany, ".schedulingConstraints.topology"}}},
    // S6 / S7: topology key required and a label key.
    {"S6 pass", R"({"schedulingConstraints":{"topology":[{"key":"a"}]}})", {}},
    {"S6 fail (absent)", R"({"schedulingConstraints":{"topology":[{}]}})",
     {{ErrorType::kRequired, ".schedulingConstraints.topology[0].key"}}},
    {"S6 fail (empty)", R"({"schedulingConstraints":{"topology":[{"key":""}]}})",
     {{ErrorType::kRequired, ".schedulingConstraints.topology[0].key"}}},
    {"S7 pass", R"({"schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]}})",
     {}},
    {"S7 fail", R"({"schedulingConstraints":{"topology":[{"key":"bad key"}]}})",
     {{ErrorType::kInvalid, ".schedulingConstraints.topology[0].key"}}},
    {"S7 fail (two messages)", R"({"schedulingConstraints":{"topology":[{"key":"x/"}]}})",
     {{ErrorType::kInvalid, ".schedulingConstraints.topology[0].key"},
      {ErrorType::kInvalid, ".schedulingConstraints.topology[0].key"}}},
    // S8 / S9: disruptionMode is a union of single and all.
    {"S8 pass", R"({"disruptionMode":{"single":{}}})", {}},
    {"S8 fail", R"({"disruptionMode":{}})", {{ErrorType::kInvalid, ".disruptionMode"}}},
    {"S9 pass", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})", {}},
    {"S9 fail", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{},"all":{}}})",
     {{ErrorType::kInvalid, ".disruptionMode"}}},
    // S10: at most four claims.
    {"S10 pass",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},{"name":"b","resourceClaimName":"x"},
        {"name":"c","resourceClaimName":"x"},{"name":"d","resourceClaimName":"x"}]})",
     {}},
    {"S10 fail",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},{"name":"b","resourceClaimName":"x"},
        {"name":"c","resourceClaimName":"x"},{"name":"d","resourceClaimName":"x"},
        {"name":"e","resourceClaimName":"x"}]})",
     {{ErrorType::kTooMany, ".resourceClaims"}}},
    // S11: claim names are unique; the later item is the duplicate.
    {"S11 pass",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},{"name":"b","resourceClaimName":"x"}]})",
     {}},
    {"S11 fail",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},{"name":"b","resourceClaimName":"y"},
        {"name":"a","resourceClaimTemplateName":"z"}]})",
     {{ErrorType::kDuplicate, ".resourceClaims[2]"}}},
    // S12 / S13: claim name required and a DNS label.
    {"S12 pass", R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})", {}},
    {"S12 fail (absent)", R"({"resourceClaims":[{"resourceClaimName":"x"}]})",
     {{ErrorType::kRequired, ".resourceClaims[0].name"}}},
    {"S12 fail (empty)", R"({"resourceClaims":[{"name":"","resourceClaimName":"x"}]})",
     {{ErrorType::kRequired, ".resourceClaims[0].name"}}},
    {"S13 pass", R"({"resourceClaims":[{"name":"gpu-pool","resourceClaimName":"x"}]})", {}},
    {"S13 fail", R"({"resourceClaims":[{"name":"GPU","resourceClaimName":"x"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0].name"}}},
    {"S13 fail (dots)", R"({"resourceClaims":[{"name":"a.b","resourceClaimName":"x"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0].name"}}},
    // S14 / S15: exactly one claim source.
    {"S14 pass", R"({"resourceClaims":[{"name":"a","resourceClaimTemplateName":"t"}]})", {}},
    {"S14 fail", R"({"resourceClaims":[{"name":"a"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0]"}}},
    {"S15 pass", R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})", {}},
    {"S15 pass (other source null)",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x",)"
     R"("resourceClaimTemplateName":null}]})",
     {}},
    {"S15 fail", R"({"resourceClaims":[{"name":"a","resourceClaimName":"x","resourceClaimTemplateName":"t"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0]"}}},
    // S16: sources are DNS subdomains.
    {"S16 pass", R"({"resourceClaims":[{"name":"a","resourceClaimTemplateName":"gpu-template.v1"}]})",
     {}},
    {"S16 pass (claim name)",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"gpu-claim.v1"}]})", {}},
    {"S16 fail (claim name)", R"({"resourceClaims":[{"name":"a","resourceClaimName":"Bad_Name"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0].resourceClaimName"}}},
    {"S16 fail (template name)",
     R"({"resourceClaims":[{"name":"a","resourceClaimTemplateName":"x..y"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0].resourceClaimTemplateName"}}},
    // B1: disruptionMode all needs gang.
    {"B1 pass (gang)", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})", {}},
    {"B1 pass (basic single)", R"({"schedulingPolicy":{"basic":{}},"disruptionMode":{"single":{}}})",
     {}},
    {"B1 fail (policy omitted)", R"({"disruptionMode":{"all":{}}})",
     {{ErrorType::kInvalid, ".disruptionMode"}}},
    {"B1 fail (basic)", R"({"schedulingPolicy":{"basic":{}},"disruptionMode":{"all":{}}})",
     {{ErrorType::kInvalid, ".disruptionMode"}}},
    // Everything valid together, and the empty config (basic, nothing else).
    {"all valid",
     R"({"schedulingPolicy":{"gang":{"minCount":3}},
        "schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]},
        "disruptionMode":{"all":{}},
        "resourceClaims":[{"name":"gpu-pool","resourceClaimTemplateName":"gpu-template"}]})",
     {}},
    {"empty config", "{}", {}},
    {"several at once", R"({"schedulingPolicy":{"gang":{"minCount":0}},"disruptionMode":{}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang.minCount"},
      {ErrorType::kInvalid, ".disruptionMode"}}},
};
// clang-format on

// S17: only the annotation carrier (strict) reports these; the field carrier
// has been schema-checked by the API server and must simply not crash.
// clang-format off
const std::vector<Row> kStrictRows = {
    {"S17 pass", R"({"schedulingPolicy":{"gang":{"minCount":2}}})", {}},
    {"S17 unknown top-level", R"({"shedulingPolicy":{"gang":{}}})", {{ErrorType::kInvalid, ""}}},
    {"S17 unknown in gang", R"({"schedulingPolicy":{"gang":{"minCount":2,"min":1}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang"}}},
    {"S17 unknown in basic", R"({"schedulingPolicy":{"basic":{"x":1}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.basic"}}},
    {"S17 unknown in all", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{"x":1}}})",
     {{ErrorType::kInvalid, ".disruptionMode.all"}}},
    {"S17 unknown in claim", R"({"resourceClaims":[{"name":"a","resourceClaimName":"x","y":1}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0]"}}},
    {"S17 unknown in topology", R"({"schedulingConstraints":{"topology":[{"key":"a","k":1}]}})",
     {{ErrorType::kInvalid, ".schedulingConstraints.topology[0]"}}},
    {"S17 policy not an object", R"({"schedulingPolicy":"gang"})",
     {{ErrorType::kInvalid, ".schedulingPolicy"}}},
    {"S17 gang not an object", R"({"schedulingPolicy":{"gang":true}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang"}}},
    {"S17 minCount a string", R"({"schedulingPolicy":{"gang":{"minCount":"3"}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang.minCount"}}},
    {"S17 minCount a float", R"({"schedulingPolicy":{"gang":{"minCount":2.5}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang.minCount"}}},
    {"S17 minCount beyond int32", R"({"schedulingPolicy":{"gang":{"minCount":4294967296}}})",
     {{ErrorType::kInvalid, ".schedulingPolicy.gang.minCount"}}},
    {"S17 topology not a list", R"({"schedulingConstraints":{"topology":{"key":"a"}}})",
     {{ErrorType::kInvalid, ".schedulingConstraints.topology"}}},
    {"S17 topology item not an object", R"({"schedulingConstraints":{"topology":["zone"]}})",
     {{ErrorType::kInvalid, ".schedulingConstraints.topology[0]"}}},
    {"S17 key not a string", R"({"schedulingConstraints":{"topology":[{"key":5}]}})",
     {{ErrorType::kInvalid, ".schedulingConstraints.topology[0].key"}}},
    {"S17 constraints not an object", R"({"schedulingConstraints":[]})",
     {{ErrorType::kInvalid, ".schedulingConstraints"}}},
    {"S17 mode not an object", R"({"disruptionMode":"all"})",
     {{ErrorType::kInvalid, ".disruptionMode"}}},
    {"S17 claims not a list", R"({"resourceClaims":{"name":"a"}})",
     {{ErrorType::kInvalid, ".resourceClaims"}}},
    {"S17 claim not an object", R"({"resourceClaims":["a"]})",
     {{ErrorType::kInvalid, ".resourceClaims[0]"}}},
    {"S17 claim name not a string", R"({"resourceClaims":[{"name":7,"resourceClaimName":"x"}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0].name"}}},
    {"S17 source not a string", R"({"resourceClaims":[{"name":"a","resourceClaimName":[]}]})",
     {{ErrorType::kInvalid, ".resourceClaims[0].resourceClaimName"}}},
};
// clang-format on

}  // namespace

// Each row, and each carrier of a row, runs in its own section, so a failing
// row does not hide the rows after it. The index keeps section names unique.
TEST_CASE("S2-S16, B1: every row, both carriers", "[unit]") {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    const Row& row = kRows[i];
    DYNAMIC_SECTION("row " << i << ": " << row.rule) {
      const json config = json::parse(row.config);
      for (const auto& [prefix, strict] :
           {std::pair{kField, false}, std::pair{kAnnotation, true}}) {
        DYNAMIC_SECTION("at " << prefix.String()) {
          INFO(row.rule << " at " << prefix.String() << ": " << row.config);
          WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(config, prefix, strict),
                              Rooted(row.expected, prefix));
        }
      }
    }
  }
}

TEST_CASE("S17: strict for the annotation, silent but safe for the field", "[unit]") {
  for (std::size_t i = 0; i < kStrictRows.size(); ++i) {
    const Row& row = kStrictRows[i];
    DYNAMIC_SECTION("row " << i << ": " << row.rule) {
      const json config = json::parse(row.config);
      INFO(row.rule << ": " << row.config);
      WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(config, kAnnotation, true),
                          Rooted(row.expected, kAnnotation));
      wb::FieldErrorList lenient;
      REQUIRE_NOTHROW(lenient = wb::ValidateSchedulingConfig(config, kField, false));
      for (const wb::FieldError& e : lenient) CHECK(e.detail.rfind("must be a", 0) != 0);
    }
  }
}

TEST_CASE("A non-object config is Invalid at P in both modes", "[unit]") {
  for (const json& config : {json(5), json("x"), json::array(), json(nullptr)}) {
    DYNAMIC_SECTION("config " << config.dump()) {
      WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(config, kAnnotation, true),
                          {{ErrorType::kInvalid, kAnnotation.String()}});
      WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(config, kField, false),
                          {{ErrorType::kInvalid, "spec.scheduling"}});
    }
  }
}

TEST_CASE("Items past a list limit are not checked", "[unit]") {
  const json config = json::parse(
      R"({"resourceClaims":[{},{},{},{},{}],"schedulingConstraints":{"topology":[{},{}]}})");
  WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(config, kField, false),
                      {{ErrorType::kTooMany, "spec.scheduling.schedulingConstraints.topology"},
                       {ErrorType::kTooMany, "spec.scheduling.resourceClaims"}});
}

TEST_CASE("Golden messages of the structural rules", "[unit]") {
  const auto message = [](const char* config) {
    return wb::AggregateMessage(wb::ValidateSchedulingConfig(json::parse(config), kField, false));
  };
  CHECK(message(R"({"schedulingPolicy":{}})") ==
        "spec.scheduling.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, "
        "`gang`");
  CHECK(message(R"({"schedulingPolicy":{"basic":{},"gang":{}}})") ==
        "spec.scheduling.schedulingPolicy: Invalid value: \"{basic, gang}\": must specify exactly "
        "one of: `basic`, `gang`");
  CHECK(
      message(R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{},"all":{}}})") ==
      "spec.scheduling.disruptionMode: Invalid value: \"{single, all}\": must specify exactly one "
      "of: `single`, `all`");
  CHECK(message(R"({"resourceClaims":[{"name":"a"}]})") ==
        "spec.scheduling.resourceClaims[0]: Invalid value: \"\": must specify one of: "
        "`resourceClaimName`, `resourceClaimTemplateName`");
  CHECK(message(R"({"schedulingPolicy":{"gang":{"minCount":0}}})") ==
        "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or "
        "equal to 1");
  CHECK(message(R"({"schedulingConstraints":{"topology":[{"key":"a"},{"key":"b"}]}})") ==
        "spec.scheduling.schedulingConstraints.topology: Too many: 2: must have at most 1 items");
  CHECK(message(R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},
                                      {"name":"a","resourceClaimName":"y"}]})") ==
        "spec.scheduling.resourceClaims[1]: Duplicate value: {\"name\":\"a\"}");
  CHECK(message(R"({"resourceClaims":[{"name":"GPU","resourceClaimName":"x"}]})") ==
        "spec.scheduling.resourceClaims[0].name: Invalid value: \"GPU\": a lowercase RFC 1123 "
        "label must consist of lower case alphanumeric characters or '-', and must start and end "
        "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  CHECK(message(R"({"disruptionMode":{"all":{}}})") ==
        "spec.scheduling.disruptionMode: Invalid value: \"all\": the disruptionMode `all` is not "
        "supported with the Basic scheduling policy");
  CHECK(wb::AggregateMessage(
            wb::ValidateSchedulingConfig(json::parse(R"({"x":1})"), kAnnotation, true)) ==
        "metadata.annotations[wasd.io/scheduling]: Invalid value: \"x\": unknown field");
  // S6: Required prints neither a value nor a detail.
  CHECK(message(R"({"schedulingConstraints":{"topology":[{}]}})") ==
        "spec.scheduling.schedulingConstraints.topology[0].key: Required value");
  CHECK(message(R"({"schedulingConstraints":{"topology":[{"key":""}]}})") ==
        "spec.scheduling.schedulingConstraints.topology[0].key: Required value");
  // S7: one Invalid per qualified-name message, the key as the value.
  CHECK(message(R"({"schedulingConstraints":{"topology":[{"key":"bad key"}]}})") ==
        "spec.scheduling.schedulingConstraints.topology[0].key: Invalid value: \"bad key\": name "
        "part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
        "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  CHECK(message(R"({"schedulingConstraints":{"topology":[{"key":"x/"}]}})") ==
        "[spec.scheduling.schedulingConstraints.topology[0].key: Invalid value: \"x/\": name part "
        "must be non-empty, spec.scheduling.schedulingConstraints.topology[0].key: Invalid value: "
        "\"x/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]");
  // S8
  CHECK(message(R"({"disruptionMode":{}})") ==
        "spec.scheduling.disruptionMode: Invalid value: \"\": must specify one of: `single`, "
        "`all`");
  // S10: the value is the actual count.
  CHECK(message(R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},
                                      {"name":"b","resourceClaimName":"x"},
                                      {"name":"c","resourceClaimName":"x"},
                                      {"name":"d","resourceClaimName":"x"},
                                      {"name":"e","resourceClaimName":"x"}]})") ==
        "spec.scheduling.resourceClaims: Too many: 5: must have at most 4 items");
  // S12
  CHECK(message(R"({"resourceClaims":[{"resourceClaimName":"x"}]})") ==
        "spec.scheduling.resourceClaims[0].name: Required value");
  CHECK(message(R"({"resourceClaims":[{"name":"","resourceClaimName":"x"}]})") ==
        "spec.scheduling.resourceClaims[0].name: Required value");
  // S15
  CHECK(message(R"({"resourceClaims":[{"name":"a","resourceClaimName":"x",
                                       "resourceClaimTemplateName":"t"}]})") ==
        "spec.scheduling.resourceClaims[0]: Invalid value: \"{resourceClaimName, "
        "resourceClaimTemplateName}\": must specify exactly one of: `resourceClaimName`, "
        "`resourceClaimTemplateName`");
  // S16, at either source.
  CHECK(message(R"({"resourceClaims":[{"name":"a","resourceClaimName":"Bad_Name"}]})") ==
        "spec.scheduling.resourceClaims[0].resourceClaimName: Invalid value: \"Bad_Name\": a "
        "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
        "used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  CHECK(message(R"({"resourceClaims":[{"name":"a","resourceClaimTemplateName":"x..y"}]})") ==
        "spec.scheduling.resourceClaims[0].resourceClaimTemplateName: Invalid value: \"x..y\": a "
        "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
        "used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

TEST_CASE("Wrong types anywhere never throw", "[unit]") {
  const json values[] = {
      json(nullptr), json(1),       json(-1.5),     json("s"),
      json(true),    json::array(), json::object(), json::array({1, "a", nullptr})};
  const char* members[] = {"schedulingPolicy", "schedulingConstraints", "disruptionMode",
                           "resourceClaims"};
  for (const char* m : members) {
    for (const json& v : values) {
      const json shapes[] = {
          json{{m, v}},
          json{{m, {{"gang", v}, {"basic", v}, {"topology", v}, {"all", v}}}},
          json{{m, {{"gang", {{"minCount", v}}}, {"topology", json::array({v})}}}},
          json{{m, json::array({v, json{{"name", v}, {"resourceClaimName", v}}})}},
      };
      for (const json& config : shapes) {
        INFO(config.dump());
        CHECK_NOTHROW(wb::ValidateSchedulingConfig(config, kField, false));
        CHECK_NOTHROW(wb::ValidateSchedulingConfig(config, kAnnotation, true));
      }
    }
  }
}

// Union ratcheting (§b.0): with the stored config given, a union is checked
// only when its set members differ from the stored union's.
TEST_CASE("Unions are re-checked on update only when their membership changed", "[unit]") {
  const json both = json::parse(R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":2}},
                                    "disruptionMode":{},
                                    "resourceClaims":[{"name":"a"}]})");
  const json stored = json::parse(R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":3}},
                                      "disruptionMode":{},
                                      "resourceClaims":[{"name":"a"}]})");
  // Without the stored config: S3, S8 and S14.
  WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(both, kField, false),
                      Rooted({{ErrorType::kInvalid, ".schedulingPolicy"},
                              {ErrorType::kInvalid, ".disruptionMode"},
                              {ErrorType::kInvalid, ".resourceClaims[0]"}},
                             kField));
  // Same membership everywhere: nothing to report.
  WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(both, kField, false, &stored), {});
  // Each union whose members changed is checked again; the others stay quiet.
  const json changed = json::parse(R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":3}},
                                       "disruptionMode":{"single":{},"all":{}},
                                       "resourceClaims":[{"name":"a"}]})");
  WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(changed, kField, false, &stored),
                      Rooted({{ErrorType::kInvalid, ".disruptionMode"}}, kField));
  // A stored config that is not an object ratchets nothing.
  const json not_an_object = json::array();
  WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(both, kField, false, &not_an_object),
                      Rooted({{ErrorType::kInvalid, ".schedulingPolicy"},
                              {ErrorType::kInvalid, ".disruptionMode"},
                              {ErrorType::kInvalid, ".resourceClaims[0]"}},
                             kField));
}
