// Each rule's error carries its rule id from where the rule makes it: a
// failing case of every rule that can fire (one row per rule, more for the
// rules with several producers) goes through the real validators, both
// carriers, and every error it yields must carry exactly that row's id. The
// rows together cover every id but the four that never fire for wasd (S1,
// U6, B2, B3: workloadbuilder/rule_id.h says why) and "other".
#include "rules/rule_ids.h"

#include <catch2/catch.hpp>

#include <set>

#include "rules/deployment_rules.h"
#include "tests/rules/rules_fixtures.h"

using nlohmann::json;
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
  for (wb::RuleId id : RuleIdsOf(errors)) out.emplace_back(wb::RuleIdName(id));
  return out;
}

// The id each error carries, one per error (not deduplicated).
std::vector<std::string> EachId(const wb::FieldErrorList& errors) {
  std::vector<std::string> out;
  for (const wb::FieldError& e : errors) out.emplace_back(wb::RuleIdName(e.rule));
  return out;
}

wb::BackendSettings AllBackends() {
  wb::BackendSettings s;
  s.allowed = {wb::kAllBackends.begin(), wb::kAllBackends.end()};
  return s;
}

json OnBackend(json d, std::string_view backend) {
  d["metadata"]["annotations"]["wasd.io/backend"] = backend;
  return d;
}

// The backend rules: a Deployment edit, run under all backends allowed
// (or, for `only_native`, under --allowed-backends=native alone).
struct BackendRow {
  const char* id;
  Via via;
  const char* config;
  std::function<void(json&)> edit;
  bool only_native = false;
};

const std::vector<BackendRow> kBackendRows = {
    {"K1", Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}}})",
     [](json& d) { d = OnBackend(d, "slurm"); }},
    {"K1", Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}}})",
     [](json& d) { d = OnBackend(d, "volcano"); }, true},
    {"K3", Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
     [](json& d) { d = OnBackend(d, "volcano"); }},
    {"K3", Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{}},"schedulingConstraints":{"topology":[{"key":"zone"}]}})",
     [](json& d) { d = OnBackend(d, "kai"); }},
    {"K3", Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{}},"backends":{"volcano":{"queue":"q"}}})",
     [](json& d) { d = OnBackend(d, "kai"); }},
    {"K3", Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{}},"backends":{"coscheduling":{"queue":"q"}}})",
     [](json& d) { d = OnBackend(d, "coscheduling"); }},
    {"K4", Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})",
     [](json& d) {
       d = OnBackend(d, "kai");
       d["spec"]["template"]["spec"]["schedulerName"] = "volcano";
     }},
    {"K5", Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}},"backends":[]})", NoEdit},
    {"K5", Via::kAnnotation, R"({"schedulingPolicy":{"gang":{}},"backends":{"slurm":{}}})", NoEdit},
    {"K5", Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}},"backends":{"kai":{"queue":"Team A"}}})",
     [](json& d) { d = OnBackend(d, "kai"); }},
    {"K5", Via::kAnnotation,
     R"({"schedulingPolicy":{"gang":{}},"backends":{"volcano":{"minResources":{"cpu":"lots"}}}})",
     [](json& d) { d = OnBackend(d, "volcano"); }},
    {"K5", Via::kField, R"({"schedulingPolicy":{"gang":{}},"backends":{}})", NoEdit},
};

// The rules checked outside the three tables: H4 (a scale request), H5 (both
// carriers set, differently) and K2 (an UPDATE of wasd.io/backend).
const std::vector<const char*> kOtherRows = {"H4", "H5", "K2"};

// `errors` is not empty and every error carries `id`.
void CheckAllCarry(const wb::FieldErrorList& errors, const std::string& id) {
  INFO(wb::AggregateMessage(errors));
  REQUIRE_FALSE(errors.empty());
  CHECK(EachId(errors) == std::vector<std::string>(errors.size(), id));
}

}  // namespace

TEST_CASE("each create rule's error carries its id, both carriers", "[unit]") {
  for (const CreateRow& row : kCreateRows) {
    for (Via via : {Via::kField, Via::kAnnotation}) {
      if (row.annotation_only && via == Via::kField) continue;
      json d = WithConfig(BaseDeployment(), via, row.config);
      row.edit(d);
      INFO(row.id << " via " << wasd::testing::ViaName(via));
      CheckAllCarry(wasd::rules::ValidateDeploymentCreate(d), row.id);
    }
  }
}

TEST_CASE("each update rule's error carries its id, both carriers", "[unit]") {
  for (const UpdateRow& row : kUpdateRows) {
    for (Via via : {Via::kField, Via::kAnnotation}) {
      json old = BaseDeployment();
      json now = BaseDeployment();
      if (row.old_config != nullptr) old = WithConfig(old, via, row.old_config);
      if (row.new_config != nullptr) now = WithConfig(now, via, row.new_config);
      const wb::FieldErrorList errors = wasd::rules::ValidateDeploymentUpdate(now, old);
      INFO(row.ids[0] << " via " << wasd::testing::ViaName(via) << ": "
                      << wb::AggregateMessage(errors));
      // One error per rule broken, each carrying its own id.
      CHECK(EachId(errors) == row.ids);
    }
  }
}

TEST_CASE("each backend rule's error carries its id", "[unit][backend]") {
  for (const BackendRow& row : kBackendRows) {
    wb::BackendSettings settings = AllBackends();
    if (row.only_native) settings.allowed = {wb::Backend::kNative};
    json d = WithConfig(BaseDeployment(), row.via, row.config);
    row.edit(d);
    INFO(row.id << " via " << wasd::testing::ViaName(row.via) << ": " << row.config);
    CheckAllCarry(wasd::rules::ValidateDeploymentCreate(d, settings), row.id);
  }
}

TEST_CASE("H4 (scale), H5 (two carriers) and K2 (backend changed) carry their ids", "[unit]") {
  json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                      R"({"schedulingPolicy":{"gang":{"minCount":3}}})");
  const json scale = {
      {"apiVersion", "autoscaling/v1"}, {"kind", "Scale"}, {"spec", {{"replicas", 2}}}};
  CheckAllCarry(wasd::rules::ValidateScaleUpdate(scale, d), "H4");

  json both = WithConfig(BaseDeployment(), Via::kField, R"({"schedulingPolicy":{"gang":{}}})");
  both = WithConfig(both, Via::kAnnotation, R"({"schedulingPolicy":{"basic":{}}})");
  CheckAllCarry(wasd::rules::ValidateDeploymentCreate(both), "H5");

  // A gang both backends can run (KAI needs disruptionMode all).
  const json gang = WithConfig(BaseDeployment(), Via::kAnnotation,
                               R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})");
  CheckAllCarry(wasd::rules::ValidateDeploymentUpdate(OnBackend(gang, "kai"),
                                                      OnBackend(gang, "volcano"), AllBackends()),
                "K2");
}

TEST_CASE("the rows cover every rule that can fire", "[unit]") {
  std::set<std::string> covered;
  for (const CreateRow& row : kCreateRows) covered.insert(row.id);
  for (const UpdateRow& row : kUpdateRows) covered.insert(row.ids.begin(), row.ids.end());
  for (const BackendRow& row : kBackendRows) covered.insert(row.id);
  covered.insert(kOtherRows.begin(), kOtherRows.end());
  // Never fire for wasd (workloadbuilder/rule_id.h): S1 (no feature gate),
  // U6 (minCount may change), B2 and B3 (both policies and modes supported).
  std::set<std::string> want;
  for (std::string_view id : wasd::rules::kRuleIds) want.emplace(id);
  for (const char* never : {"S1", "U6", "B2", "B3", "other"}) want.erase(never);
  CHECK(covered == want);
}

TEST_CASE("an error no rule makes carries other", "[unit]") {
  const wb::FieldError e = wb::Required(wb::FieldPath::Parse("spec.selector"));
  CHECK(e.rule == wb::RuleId::kOther);
  CHECK(wb::RuleIdName(e.rule) == "other");
  CHECK(wb::Invalid(wb::FieldPath::Parse("spec.replicas"), 1, "x").For(wb::RuleId::kH4).rule ==
        wb::RuleId::kH4);
  CHECK(wasd::rules::kRuleIds.back() == "other");
}

TEST_CASE("RuleIdsOf lists each id once, in table order", "[unit]") {
  json d = WithConfig(BaseDeployment(), Via::kAnnotation,
                      R"({"schedulingPolicy":{"gang":{"minCount":5}},"x":1,"y":2})");
  d["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  CHECK(Ids(wasd::rules::ValidateDeploymentCreate(d)) ==
        std::vector<std::string>{"S17", "H1", "H2"});
}
