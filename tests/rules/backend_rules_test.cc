// The backend rules through the Deployment entry points (docs/design.md Q19):
// one denial per capability-table row a backend cannot express, the
// annotation wasd.io/backend (unknown, not allowed, immutable), the
// template's schedulerName, the backends block, and the rule ids K1–K5.
#include <catch2/catch.hpp>

#include "rules/deployment_rules.h"
#include "rules/rule_ids.h"
#include "tests/rules/rules_fixtures.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;
using wasd::testing::AtCarrier;
using wasd::testing::BaseDeployment;
using wasd::testing::Via;
using wasd::testing::WithConfig;
using ET = wb::ErrorType;

namespace {

constexpr char kBackendPath[] = "metadata.annotations[wasd.io/backend]";

wb::BackendSettings AllBackends(wb::Backend chosen = wb::Backend::kNative) {
  wb::BackendSettings s;
  s.backend = chosen;
  s.allowed = {wb::kAllBackends.begin(), wb::kAllBackends.end()};
  return s;
}

json OnBackend(json d, std::string_view backend) {
  d["metadata"]["annotations"]["wasd.io/backend"] = backend;
  return d;
}

std::vector<std::string> Ids(const wb::FieldErrorList& errors) {
  std::vector<std::string> out;
  for (wb::RuleId id : wasd::rules::RuleIdsOf(errors)) out.emplace_back(wb::RuleIdName(id));
  return out;
}

// A row of the capability table a backend cannot express, as a config and
// the error's path relative to the carrier (P).
struct Denial {
  const char* backend;
  const char* config;
  const char* path;
};

const std::vector<Denial> kDenials = {
    // topology: Volcano and KAI without the facts for the key; never coscheduling.
    {"volcano",
     R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"zone"}]}})",
     "P.schedulingConstraints.topology"},
    {"kai",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}},)"
     R"("schedulingConstraints":{"topology":[{"key":"zone"}]}})",
     "P.schedulingConstraints.topology"},
    {"coscheduling",
     R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"zone"}]}})",
     "P.schedulingConstraints.topology"},
    // disruptionMode: native only; KAI under its conditions.
    {"volcano", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
     "P.disruptionMode"},
    {"coscheduling", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
     "P.disruptionMode"},
    {"kai", R"({"schedulingPolicy":{"gang":{"minCount":2}},"disruptionMode":{"all":{}}})",
     "P.disruptionMode"},
    {"kai", R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
     "P.disruptionMode"},
    // resourceClaims: native only.
    {"volcano",
     R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})",
     "P.resourceClaims"},
    {"kai",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}},)"
     R"("resourceClaims":[{"name":"a","resourceClaimName":"x"}]})",
     "P.resourceClaims"},
    {"coscheduling",
     R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})",
     "P.resourceClaims"},
    // A block of another backend's settings.
    {"kai",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}},)"
     R"("backends":{"volcano":{"queue":"q"}}})",
     "P.backends.volcano"},
};

}  // namespace

TEST_CASE("one denial per capability row a backend cannot express", "[unit][backend]") {
  const wb::BackendSettings settings = AllBackends();
  for (const Denial& row : kDenials) {
    // The backend rules judge wasd's annotation; spec.scheduling is the
    // in-tree controller's (native) and gets none of them (Q22).
    for (Via via : {Via::kAnnotation}) {
      const json d = OnBackend(WithConfig(BaseDeployment(), via, row.config), row.backend);
      const wb::FieldErrorList errors = wasd::rules::ValidateDeploymentCreate(d, settings);
      INFO(row.backend << " " << row.config << " via " << wasd::testing::ViaName(via));
      WASD_REQUIRE_ERRORS(errors, AtCarrier({{ET::kForbidden, row.path}}, via));
      CHECK_THAT(errors[0].detail, Catch::Contains("backend \"" + std::string(row.backend) + "\""));
      CHECK(Ids(errors) == std::vector<std::string>{"K3"});
      // The same intent is fine on native.
      CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(d, "native"), settings).empty() ==
            (std::string_view(row.path).find("backends") == std::string::npos));
    }
  }
}

TEST_CASE("the backend from --backend when the Deployment names none", "[unit][backend]") {
  const json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                            R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})");
  CHECK(wasd::rules::ValidateDeploymentCreate(d).empty());  // native only
  const wb::FieldErrorList errors =
      wasd::rules::ValidateDeploymentCreate(d, AllBackends(wb::Backend::kCoscheduling));
  WASD_REQUIRE_ERRORS(errors, AtCarrier({{ET::kForbidden, "P.disruptionMode"}}, Via::kAnnotation));
  CHECK(errors[0].ToString() ==
        "metadata.annotations[wasd.io/scheduling].disruptionMode: Forbidden: not supported by "
        "backend \"coscheduling\"; remove it or use backend \"native\" or \"kai\"");
}

TEST_CASE("topology on Volcano and KAI with the cluster facts", "[unit][backend]") {
  wb::BackendSettings settings = AllBackends();
  settings.facts.volcano_tiers = {{"zone", {2, ""}}};
  settings.facts.kai_topology = "t";
  settings.facts.kai_topology_levels = {"zone"};
  const json d = WithConfig(
      BaseDeployment(), Via::kAnnotation,
      R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"zone"}]}})");
  const json kai = WithConfig(BaseDeployment(), Via::kAnnotation,
                              R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}},)"
                              R"("schedulingConstraints":{"topology":[{"key":"zone"}]}})");
  CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(d, "volcano"), settings).empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(kai, "kai"), settings).empty());
  CHECK_FALSE(
      wasd::rules::ValidateDeploymentCreate(OnBackend(d, "coscheduling"), settings).empty());
}

TEST_CASE("wasd.io/backend: unknown names, backends not allowed", "[unit][backend]") {
  wb::BackendSettings settings;
  settings.backend = wb::Backend::kVolcano;
  settings.allowed = {wb::Backend::kNative, wb::Backend::kVolcano};
  const json d =
      WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}}})");
  CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(d, "volcano"), settings).empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(d, "native"), settings).empty());

  wb::FieldErrorList errors =
      wasd::rules::ValidateDeploymentCreate(OnBackend(d, "slurm"), settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kNotSupported, kBackendPath}});
  CHECK(errors[0].ToString() ==
        "metadata.annotations[wasd.io/backend]: Unsupported value: \"slurm\": supported values: "
        "\"native\", \"volcano\"");
  CHECK(Ids(errors) == std::vector<std::string>{"K1"});

  errors = wasd::rules::ValidateDeploymentCreate(OnBackend(d, "kai"), settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kForbidden, kBackendPath}});
  CHECK(errors[0].detail ==
        "backend \"kai\" is not enabled in this cluster (--allowed-backends: native, volcano); "
        "use one of those or remove the annotation");
  CHECK(Ids(errors) == std::vector<std::string>{"K1"});

  json not_a_string = d;
  not_a_string["metadata"]["annotations"]["wasd.io/backend"] = 3;
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentCreate(not_a_string, settings),
                      {{ET::kNotSupported, kBackendPath}});
  // Without a scheduling config wasd leaves the Deployment alone.
  CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(BaseDeployment(), "slurm"), settings)
            .empty());
}

TEST_CASE("wasd.io/backend is immutable", "[unit][backend]") {
  const wb::BackendSettings settings = AllBackends();
  const json d =
      WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"basic":{}}})");
  // As stored: the webhook stamped the backend into the template too.
  const auto stamped = [](json x, const char* backend) {
    x["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = backend;
    return x;
  };
  const json volcano = stamped(OnBackend(d, "volcano"), "volcano");
  CHECK(wasd::rules::ValidateDeploymentUpdate(volcano, volcano, settings).empty());
  for (const json& now : {stamped(OnBackend(d, "kai"), "volcano"), stamped(d, "volcano")}) {
    const wb::FieldErrorList errors = wasd::rules::ValidateDeploymentUpdate(now, volcano, settings);
    WASD_REQUIRE_ERRORS(errors, {{ET::kForbidden, kBackendPath}});
    CHECK_THAT(errors[0].detail, Catch::StartsWith("field is immutable"));
    CHECK_THAT(errors[0].detail, Catch::EndsWith("delete the Deployment and create it again to "
                                                 "change this"));
    CHECK(Ids(errors) == std::vector<std::string>{"K2"});
  }
  // The template's backend (its label, else the annotation) changes with
  // it: one error for each, both K2.
  for (const json& now : {OnBackend(d, "kai"), d}) {
    json labelled = volcano;
    labelled["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "volcano";
    json moved = now;
    moved["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] =
        now.contains("metadata") && now["metadata"]["annotations"].contains("wasd.io/backend")
            ? "kai"
            : "native";
    const wb::FieldErrorList errors =
        wasd::rules::ValidateDeploymentUpdate(moved, labelled, settings);
    WASD_REQUIRE_ERRORS(errors,
                        {{ET::kForbidden, kBackendPath},
                         {ET::kForbidden, "spec.template.metadata.labels[wasd.io/backend]"}});
    CHECK(Ids(errors) == std::vector<std::string>{"K2"});
  }
  // Stored without either (native): both the annotation and the template move.
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(volcano, d, settings),
                      {{ET::kForbidden, kBackendPath},
                       {ET::kForbidden, "spec.template.metadata.labels[wasd.io/backend]"}});
}

TEST_CASE("M5: the template label wasd.io/backend is checked like the annotation",
          "[unit][backend]") {
  wb::BackendSettings settings;  // --backend native
  settings.allowed = {wb::Backend::kNative, wb::Backend::kVolcano};
  constexpr char kLabelPath[] = "spec.template.metadata.labels[wasd.io/backend]";
  const json d =
      WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"basic":{}}})");
  const auto labelled = [](json x, const json& value) {
    x["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = value;
    return x;
  };
  CHECK(wasd::rules::ValidateDeploymentCreate(labelled(d, "volcano"), settings).empty());
  wb::FieldErrorList errors = wasd::rules::ValidateDeploymentCreate(labelled(d, "bogus"), settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kNotSupported, kLabelPath}});
  CHECK(errors[0].ToString() ==
        "spec.template.metadata.labels[wasd.io/backend]: Unsupported value: \"bogus\": "
        "supported values: \"native\", \"volcano\"");
  CHECK(Ids(errors) == std::vector<std::string>{"K1"});
  errors = wasd::rules::ValidateDeploymentCreate(labelled(d, "kai"), settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kForbidden, kLabelPath}});
  CHECK_THAT(errors[0].detail, Catch::StartsWith("backend \"kai\" is not enabled in this "
                                                 "cluster (--allowed-backends: native, volcano)"));
  CHECK(Ids(errors) == std::vector<std::string>{"K1"});

  // UPDATE: the stored template has no label (native); adding one that
  // names another backend is denied, also with every other rule input
  // unchanged (no ratchet), and so is a stored label's change.
  errors = wasd::rules::ValidateDeploymentUpdate(labelled(d, "volcano"), d, settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kForbidden, kLabelPath}});
  CHECK_THAT(errors[0].detail, Catch::StartsWith("field is immutable"));
  CHECK_THAT(errors[0].detail, Catch::EndsWith("(the stored pod template runs on backend "
                                               "\"native\")"));
  CHECK(Ids(errors) == std::vector<std::string>{"K2"});
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentUpdate(d, labelled(d, "volcano"), settings),
                      {{ET::kForbidden, kLabelPath}});
  // Writing out the same backend is no change.
  CHECK(wasd::rules::ValidateDeploymentUpdate(labelled(d, "native"), d, settings).empty());
  CHECK(wasd::rules::ValidateDeploymentUpdate(labelled(d, "volcano"), labelled(d, "volcano"),
                                              settings)
            .empty());
}

TEST_CASE("M4: on KAI an omitted disruptionMode is single, judged like a written one",
          "[unit][backend]") {
  const wb::BackendSettings settings = AllBackends();
  const auto on_kai = [](const char* config) {
    return OnBackend(WithConfig(BaseDeployment(), Via::kAnnotation, config), "kai");
  };
  const std::string path = "metadata.annotations[wasd.io/scheduling].disruptionMode";
  // A gang: omitted and written `single` are both denied, at the same field.
  const wb::FieldErrorList omitted = wasd::rules::ValidateDeploymentCreate(
      on_kai(R"({"schedulingPolicy":{"gang":{}}})"), settings);
  WASD_REQUIRE_ERRORS(omitted, {{ET::kRequired, path}});
  CHECK(omitted[0].ToString() ==
        path +
            ": Required value: not supported by backend \"kai\": an omitted disruptionMode "
            "means `single`, and with a gang KAI evicts the whole gang when it falls below its "
            "minimum; set disruptionMode {all: {}} with gang.minCount unset, or use backend "
            "\"native\"");
  CHECK(Ids(omitted) == std::vector<std::string>{"K3"});
  const wb::FieldErrorList written = wasd::rules::ValidateDeploymentCreate(
      on_kai(R"({"schedulingPolicy":{"gang":{"minCount":2}},"disruptionMode":{"single":{}}})"),
      settings);
  WASD_REQUIRE_ERRORS(written, {{ET::kForbidden, path}});
  WASD_REQUIRE_ERRORS(wasd::rules::ValidateDeploymentCreate(
                          on_kai(R"({"schedulingPolicy":{"gang":{"minCount":2}}})"), settings),
                      {{ET::kRequired, path}});
  // Basic: single (written or not) is what KAI does with minMember 1.
  CHECK(wasd::rules::ValidateDeploymentCreate(on_kai(R"({"schedulingPolicy":{"basic":{}}})"),
                                              settings)
            .empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(on_kai("{}"), settings).empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(
            on_kai(R"({"schedulingPolicy":{"basic":{}},"disruptionMode":{"single":{}}})"), settings)
            .empty());
  // A gang that says `all` (minimum = spec.replicas) is what KAI does.
  CHECK(wasd::rules::ValidateDeploymentCreate(
            on_kai(R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})"), settings)
            .empty());
  // Other backends: an omitted mode is not a request for anything.
  for (const char* b : {"native", "volcano", "coscheduling"}) {
    CHECK(wasd::rules::ValidateDeploymentCreate(
              OnBackend(WithConfig(BaseDeployment(), Via::kAnnotation,
                                   R"({"schedulingPolicy":{"gang":{}}})"),
                        b),
              settings)
              .empty());
  }
}

TEST_CASE("a non-native template names no third scheduler", "[unit][backend]") {
  wb::BackendSettings settings = AllBackends();
  settings.facts.coscheduling_scheduler_name = "gang-scheduler";
  const json d =
      WithConfig(BaseDeployment(), Via::kAnnotation, R"({"schedulingPolicy":{"basic":{}}})");
  const auto with_scheduler = [](json x, const char* name) {
    x["spec"]["template"]["spec"]["schedulerName"] = name;
    return x;
  };
  for (const char* ok : {"default-scheduler", ""}) {
    for (const char* b : {"native", "volcano", "kai", "coscheduling"}) {
      CHECK(wasd::rules::ValidateDeploymentCreate(with_scheduler(OnBackend(d, b), ok), settings)
                .empty());
    }
  }
  CHECK(wasd::rules::ValidateDeploymentCreate(with_scheduler(OnBackend(d, "volcano"), "volcano"),
                                              settings)
            .empty());
  CHECK(wasd::rules::ValidateDeploymentCreate(
            with_scheduler(OnBackend(d, "coscheduling"), "gang-scheduler"), settings)
            .empty());
  // Native keeps whatever kube-scheduler profile the template names.
  CHECK(wasd::rules::ValidateDeploymentCreate(with_scheduler(OnBackend(d, "native"), "my-profile"),
                                              settings)
            .empty());
  const wb::FieldErrorList errors = wasd::rules::ValidateDeploymentCreate(
      with_scheduler(OnBackend(d, "kai"), "volcano"), settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kNotSupported, "spec.template.spec.schedulerName"}});
  CHECK(errors[0].Body() ==
        "Unsupported value: \"volcano\": supported values: \"default-scheduler\", "
        "\"kai-scheduler\"");
  CHECK(Ids(errors) == std::vector<std::string>{"K4"});
  // A change of schedulerName on UPDATE is checked too (ratchet input).
  const json stored = OnBackend(d, "kai");
  CHECK_FALSE(
      wasd::rules::ValidateDeploymentUpdate(with_scheduler(stored, "volcano"), stored, settings)
          .empty());
}

TEST_CASE("the backends block through the rules", "[unit][backend]") {
  const wb::BackendSettings settings = AllBackends();
  json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                      R"({"schedulingPolicy":{"basic":{}},"backends":{"kai":{"queue":"team-a"}}})");
  CHECK(wasd::rules::ValidateDeploymentCreate(OnBackend(d, "kai"), settings).empty());
  d = WithConfig(BaseDeployment(), Via::kAnnotation,
                 R"({"schedulingPolicy":{"basic":{}},"backends":{"kai":{"queue":"Team A"}}})");
  wb::FieldErrorList errors = wasd::rules::ValidateDeploymentCreate(OnBackend(d, "kai"), settings);
  WASD_REQUIRE_ERRORS(errors,
                      AtCarrier({{ET::kInvalid, "P.backends.kai.queue"}}, Via::kAnnotation));
  CHECK(Ids(errors) == std::vector<std::string>{"K5"});
  d = WithConfig(BaseDeployment(), Via::kField,
                 R"({"schedulingPolicy":{"gang":{}},"backends":{}})");
  errors = wasd::rules::ValidateDeploymentCreate(OnBackend(d, "kai"), settings);
  WASD_REQUIRE_ERRORS(errors, {{ET::kForbidden, "spec.scheduling.backends"}});
  CHECK(Ids(errors) == std::vector<std::string>{"K5"});
  // A changed block is re-validated on UPDATE (ratchet input), and may change.
  const json stored =
      OnBackend(WithConfig(BaseDeployment(), Via::kAnnotation,
                           R"({"schedulingPolicy":{"basic":{}},"backends":{"kai":{"queue":"a"}}})"),
                "kai");
  json now = stored;
  now["metadata"]["annotations"]["wasd.io/scheduling"] =
      R"({"schedulingPolicy":{"basic":{}},"backends":{"kai":{"queue":"b"}}})";
  CHECK(wasd::rules::ValidateDeploymentUpdate(now, stored, settings).empty());
  now["metadata"]["annotations"]["wasd.io/scheduling"] =
      R"({"schedulingPolicy":{"basic":{}},"backends":{"kai":{"queue":7}}})";
  CHECK(Ids(wasd::rules::ValidateDeploymentUpdate(now, stored, settings)) ==
        std::vector<std::string>{"K5"});
}

TEST_CASE("wasd.io/backend without a scheduling config is warned about", "[unit][backend]") {
  const json d = OnBackend(BaseDeployment(), "volcano");
  const std::vector<std::string> warnings = wasd::rules::AnnotationWarnings(d);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "annotation wasd.io/backend does nothing without wasd.io/scheduling");
  CHECK(wasd::rules::AnnotationWarnings(
            OnBackend(WithConfig(BaseDeployment(), Via::kAnnotation, "{}"), "volcano"))
            .empty());
}
