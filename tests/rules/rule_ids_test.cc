// RuleIdOf: a failing case of every reachable row of WAS-API.md §b goes
// through the real validators (both carriers), and the ids read back from the
// errors are exactly that row's. A rule whose path or wording changes without
// rules/rule_ids.cc fails here.
#include "rules/rule_ids.h"

#include <catch2/catch.hpp>

#include "rules/deployment_rules.h"
#include "tests/rules/rules_fixtures.h"

using nlohmann::json;
using wasd::rules::RuleIdOf;
using wasd::rules::RuleIdsOf;
using wasd::testing::BaseDeployment;
using wasd::testing::Via;
using wasd::testing::WithConfig;
namespace wb = wasd::workloadbuilder;

namespace {

struct CreateRow {
  const char* id;
  const char* config;
  std::function<void(json&)> edit;
  // S17 is the annotation's own rule: the API server checks the field carrier.
  bool annotation_only = false;
};

void NoEdit(json&) {}

const std::vector<CreateRow> kCreateRows = {
    {"S2", R"({"schedulingPolicy":{}})", NoEdit},
    {"S3", R"({"schedulingPolicy":{"basic":{},"gang":{}}})", NoEdit},
    {"S4", R"({"schedulingPolicy":{"gang":{"minCount":0}}})", NoEdit},
    {"S5", R"({"schedulingConstraints":{"topology":[{"key":"a"},{"key":"b"}]}})", NoEdit},
    {"S6", R"({"schedulingConstraints":{"topology":[{"key":""}]}})", NoEdit},
    {"S7", R"({"schedulingConstraints":{"topology":[{"key":"not a key!"}]}})", NoEdit},
    {"S8", R"({"disruptionMode":{}})", NoEdit},
    {"S9", R"({"disruptionMode":{"single":{},"all":{}}})", NoEdit},
    {"S10",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},{"name":"b","resourceClaimName":"x"},)"
     R"({"name":"c","resourceClaimName":"x"},{"name":"d","resourceClaimName":"x"},)"
     R"({"name":"e","resourceClaimName":"x"}]})",
     NoEdit},
    {"S11",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x"},{"name":"a","resourceClaimName":"y"}]})",
     NoEdit},
    {"S12", R"({"resourceClaims":[{"name":"","resourceClaimName":"x"}]})", NoEdit},
    {"S13", R"({"resourceClaims":[{"name":"Not_A_Label","resourceClaimName":"x"}]})", NoEdit},
    {"S14", R"({"resourceClaims":[{"name":"a"}]})", NoEdit},
    {"S15",
     R"({"resourceClaims":[{"name":"a","resourceClaimName":"x","resourceClaimTemplateName":"y"}]})",
     NoEdit},
    {"S16", R"({"resourceClaims":[{"name":"a","resourceClaimName":"Bad_Name"}]})", NoEdit},
    {"S17", R"({"schedulingPolicy":{"gang":{}},"surprise":1})", NoEdit, true},
    {"S17", R"({"schedulingPolicy":"gang"})", NoEdit, true},
    {"S17", R"(not: [valid)", NoEdit, true},
    // A repeated key, wherever it is (not S13/S7 for the field it names).
    {"S17", R"({"resourceClaims":[{"name":"a","name":"b","resourceClaimName":"x"}]})", NoEdit,
     true},
    {"S17", "schedulingConstraints:\n  topology:\n  - {key: a, key: b}\n", NoEdit, true},
    {"H1", R"({"schedulingPolicy":{"gang":{"minCount":4}}})", NoEdit},
    {"H2", R"({"schedulingPolicy":{"gang":{}}})",
     [](json& d) {
       d["spec"]["strategy"] = {{"type", "RollingUpdate"}};
     }},
    {"H3", R"({})",
     [](json& d) {
       d["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
     }},
    {"B1", R"({"disruptionMode":{"all":{}}})", NoEdit},
};

struct UpdateRow {
  std::vector<std::string> ids;  // a switch of policy breaks two rules
  const char* old_config;        // nullptr: no carrier
  const char* new_config;
};

const std::vector<UpdateRow> kUpdateRows = {
    {{"U1"}, nullptr, R"({"schedulingPolicy":{"gang":{}}})"},
    {{"U2"}, R"({"schedulingPolicy":{"gang":{}}})", nullptr},
    {{"U3"}, R"({"schedulingPolicy":{"gang":{}}})", R"({})"},
    {{"U4", "U5"}, R"({"schedulingPolicy":{"basic":{}}})", R"({"schedulingPolicy":{"gang":{}}})"},
    {{"U7"},
     R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"zone"}]}})"},
    {{"U8"},
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"single":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})"},
    {{"U9"},
     R"({"schedulingPolicy":{"gang":{}}})",
     R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"a","resourceClaimName":"x"}]})"},
};

std::vector<std::string> Ids(const wb::FieldErrorList& errors) {
  std::vector<std::string> out;
  for (std::string_view id : RuleIdsOf(errors)) out.emplace_back(id);
  return out;
}

}  // namespace

TEST_CASE("rule ids of create rules, both carriers", "[unit]") {
  for (const CreateRow& row : kCreateRows) {
    for (Via via : {Via::kField, Via::kAnnotation}) {
      if (row.annotation_only && via == Via::kField) continue;
      json d = WithConfig(BaseDeployment(), via, row.config);
      row.edit(d);
      const wb::FieldErrorList errors = wasd::rules::ValidateDeploymentCreate(d);
      INFO(row.id << " via " << wasd::testing::ViaName(via) << ": "
                  << wb::AggregateMessage(errors));
      CHECK(Ids(errors) == std::vector<std::string>{row.id});
    }
  }
}

TEST_CASE("rule ids of update rules, both carriers", "[unit]") {
  for (const UpdateRow& row : kUpdateRows) {
    for (Via via : {Via::kField, Via::kAnnotation}) {
      json old = BaseDeployment();
      json now = BaseDeployment();
      if (row.old_config != nullptr) old = WithConfig(old, via, row.old_config);
      if (row.new_config != nullptr) now = WithConfig(now, via, row.new_config);
      const wb::FieldErrorList errors = wasd::rules::ValidateDeploymentUpdate(now, old);
      INFO(row.ids[0] << " via " << wasd::testing::ViaName(via) << ": "
                      << wb::AggregateMessage(errors));
      CHECK(Ids(errors) == row.ids);
    }
  }
}

TEST_CASE("rule ids of H4 (scale) and H5 (both controllers)", "[unit]") {
  json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                      R"({"schedulingPolicy":{"gang":{"minCount":3}}})");
  const json scale = {
      {"apiVersion", "autoscaling/v1"}, {"kind", "Scale"}, {"spec", {{"replicas", 2}}}};
  CHECK(Ids(wasd::rules::ValidateScaleUpdate(scale, d)) == std::vector<std::string>{"H4"});

  // H5 (Q22): spec.scheduling and the annotation together, equal or not.
  json both = WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{}}})");
  both = WithConfig(both, Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}}})");
  CHECK(Ids(wasd::rules::ValidateDeploymentCreate(both)) == std::vector<std::string>{"H5"});
}

TEST_CASE("rule ids of rows the Deployment rules never reach, and of strangers", "[unit]") {
  const wb::FieldPath p = wb::FieldPath::Parse("spec.scheduling");
  CHECK(RuleIdOf(wb::Forbidden(p.Child("schedulingPolicy").Child("gang"),
                               "gang scheduling policy is not supported by this controller")) ==
        "B2");
  CHECK(RuleIdOf(wb::Forbidden(
            p.Child("disruptionMode"),
            "the disruptionMode `single` is not supported by this controller")) == "B3");
  // A carrier that is not an object, or a broken annotation: S17, never U1.
  CHECK(RuleIdOf(wb::Invalid(p, nullptr, "must be an object")) == "S17");
  CHECK(RuleIdOf(wb::Invalid(wb::FieldPath::Parse("metadata.annotations").Key("wasd.io/scheduling"),
                             "{", "yaml: line 1: did not find expected node content")) == "S17");
  // Paths that merely start like a carrier, and unrelated paths.
  CHECK(RuleIdOf(wb::Invalid(wb::FieldPath::Parse("spec.schedulingFoo"), 1, "x")) == "other");
  CHECK(RuleIdOf(wb::Required(wb::FieldPath::Parse("spec.selector"))) == "other");
  // Every id is in the closed set.
  for (std::string_view id : {RuleIdOf(wb::Required(p)), RuleIdOf(wb::Invalid(p, 1, "x"))}) {
    CHECK(std::find(wasd::rules::kRuleIds.begin(), wasd::rules::kRuleIds.end(), id) !=
          wasd::rules::kRuleIds.end());
  }
}

TEST_CASE("RuleIdsOf lists each id once, in table order", "[unit]") {
  json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                      R"({"schedulingPolicy":{"gang":{"minCount":5}},"x":1,"y":2})");
  d["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  CHECK(Ids(wasd::rules::ValidateDeploymentCreate(d)) ==
        std::vector<std::string>{"S17", "H1", "H2"});
}
