// The capability table and its checks: one denial per row a backend cannot
// express, the conditions of the ◐ rows, and the backends block's knobs.
#include "workloadbuilder/backend_capabilities.h"

#include <catch2/catch.hpp>

#include "tests/workloadbuilder/error_matchers.h"
#include "workloadbuilder/validate.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;
using ET = wb::ErrorType;

namespace {

const wb::FieldPath kP =
    wb::FieldPath::Parse("metadata").Child("annotations").Key("wasd.io/scheduling");
const std::string kPs = "metadata.annotations[wasd.io/scheduling]";

wb::FieldErrorList Check(wb::Backend b, const json& config, const wb::ClusterFacts& facts = {}) {
  return wb::CheckBackendCapabilities(b, config, kP, facts);
}

const json kGang = {{"schedulingPolicy", {{"gang", json::object()}}}};

json With(json config, const std::string& key, json value) {
  config[key] = std::move(value);
  return config;
}

}  // namespace

TEST_CASE("the table has a column per backend and a symbol per cell", "[capabilities]") {
  REQUIRE(wb::CapabilityTable().size() >= 6);
  for (const wb::CapabilityRow& row : wb::CapabilityTable()) {
    for (wb::Backend b : wb::kAllBackends) CHECK_FALSE(wb::CapabilityOf(row, b).note.empty());
  }
  const std::string text = wb::CapabilityTableText();
  for (wb::Backend b : wb::kAllBackends) {
    CHECK_THAT(text, Catch::Contains("backend " + std::string(wb::BackendName(b)) + " ("));
  }
  CHECK_THAT(text, Catch::Contains("backends.volcano.queue"));
  const wb::Backend kai = wb::Backend::kKai;
  const std::string only = wb::CapabilityTableText(&kai);
  CHECK_THAT(only, Catch::Contains("backend kai"));
  CHECK_THAT(only, !Catch::Contains("backend volcano"));
  CHECK_THAT(wb::CapabilityTableMarkdown(), Catch::StartsWith("| intent field | native |"));
}

TEST_CASE("the README shows the capability table as the code has it", "[capabilities]") {
  // tests/testdata/../../README.md: the repository's README.
  const std::string readme = wasd::testing::ReadTestFile("../../README.md");
  INFO("README.md must contain, verbatim:\n" << wb::CapabilityTableMarkdown());
  CHECK(readme.find(wb::CapabilityTableMarkdown()) != std::string::npos);
}

TEST_CASE("gang.minCount and basic compile on every backend", "[capabilities]") {
  for (wb::Backend b : wb::kAllBackends) {
    const json gang = {{"schedulingPolicy", {{"gang", {{"minCount", 2}}}}}};
    if (b == wb::Backend::kKai) {
      // Issue 30 M4: the omitted disruptionMode is `single`, which KAI
      // cannot keep for a gang (see "disruptionMode per backend").
      WASD_REQUIRE_ERRORS(Check(b, gang), {{ET::kRequired, kPs + ".disruptionMode"}});
    } else {
      CHECK(Check(b, gang).empty());
    }
    CHECK(Check(b, {{"schedulingPolicy", {{"basic", json::object()}}}}).empty());
    CHECK(Check(b, json::object()).empty());
  }
}

TEST_CASE("topology per backend", "[capabilities]") {
  const json config = With(kGang, "schedulingConstraints",
                           {{"topology", {{{"key", "topology.kubernetes.io/zone"}}}}});
  // KAI: a gang that says `all` (an omitted mode is denied on its own).
  const json kai_config = With(config, "disruptionMode", {{"all", json::object()}});
  const std::string path = kPs + ".schedulingConstraints.topology";
  wb::ClusterFacts facts;
  CHECK(Check(wb::Backend::kNative, config, facts).empty());
  WASD_REQUIRE_ERRORS(Check(wb::Backend::kVolcano, config, facts), {{ET::kForbidden, path}});
  WASD_REQUIRE_ERRORS(Check(wb::Backend::kKai, kai_config, facts), {{ET::kForbidden, path}});
  WASD_REQUIRE_ERRORS(Check(wb::Backend::kCoscheduling, config, facts), {{ET::kForbidden, path}});

  facts.volcano_tiers = {{"kubernetes.io/hostname", {1, ""}}};
  facts.kai_topology = "topo";
  facts.kai_topology_levels = {"kubernetes.io/hostname"};
  const auto volcano = Check(wb::Backend::kVolcano, config, facts);
  WASD_REQUIRE_ERRORS(volcano, {{ET::kForbidden, path}});
  CHECK(volcano[0].ToString() ==
        path +
            ": Forbidden: not supported by backend \"volcano\": no HyperNode tier is configured "
            "for the node label \"topology.kubernetes.io/zone\" (--volcano-topology-tiers); "
            "remove it or use backend \"native\" or \"kai\"");
  const auto kai = Check(wb::Backend::kKai, kai_config, facts);
  WASD_REQUIRE_ERRORS(kai, {{ET::kForbidden, path}});
  CHECK_THAT(kai[0].detail, Catch::Contains("the KAI Topology \"topo\" has no level"));

  facts.volcano_tiers.push_back({"topology.kubernetes.io/zone", {std::nullopt, "zone"}});
  facts.kai_topology_levels.push_back("topology.kubernetes.io/zone");
  CHECK(Check(wb::Backend::kVolcano, config, facts).empty());
  CHECK(Check(wb::Backend::kKai, kai_config, facts).empty());
  WASD_REQUIRE_ERRORS(Check(wb::Backend::kCoscheduling, config, facts), {{ET::kForbidden, path}});
}

TEST_CASE("disruptionMode per backend", "[capabilities]") {
  const std::string path = kPs + ".disruptionMode";
  const json all = With(kGang, "disruptionMode", {{"all", json::object()}});
  CHECK(Check(wb::Backend::kNative, all).empty());
  const auto cos = Check(wb::Backend::kCoscheduling, all);
  WASD_REQUIRE_ERRORS(cos, {{ET::kForbidden, path}});
  CHECK(cos[0].ToString() == path +
                                 ": Forbidden: not supported by backend \"coscheduling\"; remove "
                                 "it or use backend \"native\" or \"kai\"");
  WASD_REQUIRE_ERRORS(Check(wb::Backend::kVolcano, all), {{ET::kForbidden, path}});
  SECTION("KAI: all with minMember following replicas") {
    CHECK(Check(wb::Backend::kKai, all).empty());
    json explicit_min = all;
    explicit_min["schedulingPolicy"]["gang"]["minCount"] = 2;
    WASD_REQUIRE_ERRORS(Check(wb::Backend::kKai, explicit_min), {{ET::kForbidden, path}});
  }
  SECTION("KAI: an omitted mode is single (issue 30 M4)") {
    const auto omitted = Check(wb::Backend::kKai, kGang);
    WASD_REQUIRE_ERRORS(omitted, {{ET::kRequired, path}});
    CHECK_THAT(omitted[0].detail, Catch::Contains("an omitted disruptionMode means `single`"));
    CHECK(Check(wb::Backend::kKai, {{"schedulingPolicy", {{"basic", json::object()}}}}).empty());
    CHECK(Check(wb::Backend::kVolcano, kGang).empty());
    CHECK(Check(wb::Backend::kCoscheduling, kGang).empty());
  }
  SECTION("KAI: single only with basic") {
    json single = {{"schedulingPolicy", {{"basic", json::object()}}},
                   {"disruptionMode", {{"single", json::object()}}}};
    CHECK(Check(wb::Backend::kKai, single).empty());
    single["schedulingPolicy"] = {{"gang", json::object()}};
    WASD_REQUIRE_ERRORS(Check(wb::Backend::kKai, single), {{ET::kForbidden, path}});
  }
}

TEST_CASE("resourceClaims only on native", "[capabilities]") {
  const json claims =
      With(kGang, "resourceClaims", {{{"name", "gpu"}, {"resourceClaimTemplateName", "t"}}});
  CHECK(Check(wb::Backend::kNative, claims).empty());
  for (wb::Backend b : {wb::Backend::kVolcano, wb::Backend::kKai, wb::Backend::kCoscheduling}) {
    const json mode = b == wb::Backend::kKai ? json{{"all", json::object()}} : json();
    const auto with_mode = [&](json c) {
      if (!mode.is_null()) c["disruptionMode"] = mode;
      return c;
    };
    WASD_REQUIRE_ERRORS(Check(b, with_mode(claims)), {{ET::kForbidden, kPs + ".resourceClaims"}});
    CHECK(
        Check(b, with_mode(With(kGang, "resourceClaims", json::array()))).empty());  // [] = absent
  }
}

TEST_CASE("a backends block for another backend is denied", "[capabilities]") {
  const json config = With(kGang, "backends", {{"volcano", {{"queue", "q"}}}});
  CHECK(Check(wb::Backend::kVolcano, config).empty());
  WASD_REQUIRE_ERRORS(
      Check(wb::Backend::kKai, With(config, "disruptionMode", {{"all", json::object()}})),
      {{ET::kForbidden, kPs + ".backends.volcano"}});
  WASD_REQUIRE_ERRORS(Check(wb::Backend::kNative, config),
                      {{ET::kForbidden, kPs + ".backends.volcano"}});
}

TEST_CASE("ValidateBackendKnobs: types, ranges, unknown keys, other backends' knobs",
          "[capabilities]") {
  const wb::FieldPath p = kP.Child("backends");
  const std::string ps = kPs + ".backends";
  CHECK(wb::ValidateBackendKnobs({{"volcano", {{"queue", "q"}, {"minResources", {{"cpu", "2"}}}}},
                                  {"kai", {{"queue", "team-a"}}},
                                  {"coscheduling",
                                   {{"scheduleTimeoutSeconds", 30},
                                    {"minResources", {{"nvidia.com/gpu", 4}, {"memory", "1Gi"}}}}}},
                                 p)
            .empty());
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs(json::array(), p), {{ET::kInvalid, ps}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"yunikorn", json::object()}}, p),
                      {{ET::kNotSupported, ps + ".yunikorn"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"native", json::object()}}, p),
                      {{ET::kNotSupported, ps + ".native"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"kai", "q"}}, p), {{ET::kInvalid, ps + ".kai"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"kai", {{"queu", "q"}}}}, p),
                      {{ET::kInvalid, ps + ".kai"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"kai", {{"queue", "Not_A_Name"}}}}, p),
                      {{ET::kInvalid, ps + ".kai.queue"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"kai", {{"queue", ""}}}}, p),
                      {{ET::kRequired, ps + ".kai.queue"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"kai", {{"queue", 3}}}}, p),
                      {{ET::kInvalid, ps + ".kai.queue"}});
  const auto kai_min = wb::ValidateBackendKnobs({{"kai", {{"minResources", {{"cpu", "1"}}}}}}, p);
  WASD_REQUIRE_ERRORS(kai_min, {{ET::kForbidden, ps + ".kai.minResources"}});
  CHECK(kai_min[0].detail ==
        "not supported by backend \"kai\"; remove it or use backend \"volcano\" or "
        "\"coscheduling\"");
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"volcano", {{"scheduleTimeoutSeconds", 5}}}}, p),
                      {{ET::kForbidden, ps + ".volcano.scheduleTimeoutSeconds"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"coscheduling", {{"queue", "q"}}}}, p),
                      {{ET::kForbidden, ps + ".coscheduling.queue"}});
  for (const json& bad : {json(0), json(-1), json(2147483648LL), json("60"), json(1.5)}) {
    WASD_REQUIRE_ERRORS(
        wb::ValidateBackendKnobs({{"coscheduling", {{"scheduleTimeoutSeconds", bad}}}}, p),
        {{ET::kInvalid, ps + ".coscheduling.scheduleTimeoutSeconds"}});
  }
  WASD_REQUIRE_ERRORS(
      wb::ValidateBackendKnobs({{"volcano", {{"minResources", {{"cpu", "two"}}}}}}, p),
      {{ET::kInvalid, ps + ".volcano.minResources[cpu]"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"volcano", {{"minResources", {{"cpu", -1}}}}}}, p),
                      {{ET::kInvalid, ps + ".volcano.minResources[cpu]"}});
  WASD_REQUIRE_ERRORS(
      wb::ValidateBackendKnobs({{"volcano", {{"minResources", {{"a b", "1"}}}}}}, p),
      {{ET::kInvalid, ps + ".volcano.minResources[a b]"}});
  WASD_REQUIRE_ERRORS(wb::ValidateBackendKnobs({{"volcano", {{"minResources", "4"}}}}, p),
                      {{ET::kInvalid, ps + ".volcano.minResources"}});
}

TEST_CASE("the annotation accepts a valid backends block and reports a bad one", "[capabilities]") {
  const json good = With(kGang, "backends", {{"kai", {{"queue", "q"}}}});
  CHECK(wb::ValidateSchedulingConfig(good, kP, /*strict=*/true).empty());
  const json bad = With(kGang, "backends", {{"kai", {{"queue", 1}}}});
  WASD_REQUIRE_ERRORS(wb::ValidateSchedulingConfig(bad, kP, true),
                      {{ET::kInvalid, kPs + ".backends.kai.queue"}});
}

TEST_CASE("IsQuantity", "[capabilities]") {
  for (const char* ok : {"1", "500m", "1.5Gi", "2k", ".5", "1e3", "1E-2", "+3", "10Ei", "0"}) {
    CHECK(wb::IsQuantity(ok));
  }
  for (const char* bad : {"", "-1", "m", "1.5.2", "1Gb", "1e", "1e+", "two", "1 Gi", "."}) {
    CHECK_FALSE(wb::IsQuantity(bad));
  }
}
