// migrate/plan.h: the annotation translated into spec.scheduling, the new
// manifest (what is kept, what is left out), both plans' steps and downtime,
// and every refusal.
#include "migrate/plan.h"

#include <catch2/catch.hpp>

namespace wasd::migrate {
namespace {

using nlohmann::json;

const char* kAnnotation =
    R"({"schedulingPolicy":{"gang":{"minCount":3}},)"
    R"("schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]},)"
    R"("disruptionMode":{"all":{}},"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"t"}]})";

// A stored Deployment as the API server returns one that wasd runs.
json Stored(const std::string& annotation = kAnnotation) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata",
             {{"name", "web"},
              {"namespace", "ml"},
              {"uid", "uid-web"},
              {"resourceVersion", "42"},
              {"generation", 3},
              {"creationTimestamp", "2026-12-01T10:00:00Z"},
              {"managedFields", json::array({{{"manager", "kubectl"}}})},
              {"labels", {{"app", "web"}, {"wasd.io/managed", "true"}, {"team", "a"}}},
              {"annotations",
               {{"wasd.io/scheduling", annotation},
                {"deployment.kubernetes.io/revision", "3"},
                {"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                {"owner", "team-a"}}}}},
            {"spec",
             {{"replicas", 4},
              {"selector", {{"matchLabels", {{"app", "web"}}}}},
              {"strategy", {{"type", "Recreate"}}},
              {"template",
               {{"metadata",
                 {{"creationTimestamp", nullptr},
                  {"labels",
                   {{"app", "web"}, {"wasd.io/managed", "true"}, {"wasd.io/backend", "native"}}},
                  {"annotations", {{"kubectl.kubernetes.io/restartedAt", "x"}}}}},
                {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "app:1"}}})}}}}}}},
            {"status", {{"replicas", 4}, {"availableReplicas", 4}}}};
  return d;
}

TEST_CASE("plan kinds parse and print", "[unit]") {
  CHECK(ParsePlanKind("in-place") == PlanKind::kInPlace);
  CHECK(ParsePlanKind("side-by-side") == PlanKind::kSideBySide);
  CHECK_FALSE(ParsePlanKind("inplace").has_value());
  CHECK(PlanKindName(PlanKind::kSideBySide) == "side-by-side");
}

TEST_CASE("the annotation becomes spec.scheduling member for member", "[unit]") {
  const Translation t = TranslateAnnotation(kAnnotation);
  REQUIRE(t.error.empty());
  CHECK(t.dropped.empty());
  CHECK(t.scheduling == json::parse(kAnnotation));
}

TEST_CASE("YAML annotations translate like JSON ones", "[unit]") {
  const Translation t = TranslateAnnotation(
      "schedulingPolicy:\n  gang:\n    minCount: 2\ndisruptionMode:\n  single: {}\n");
  REQUIRE(t.error.empty());
  CHECK(t.scheduling == json{{"schedulingPolicy", {{"gang", {{"minCount", 2}}}}},
                             {"disruptionMode", {{"single", json::object()}}}});
}

TEST_CASE("wasd-only members are left out and said so; null equals absent", "[unit]") {
  const Translation t =
      TranslateAnnotation(R"({"schedulingPolicy":{"basic":{}},"schedulingConstraints":null,)"
                          R"("backends":{"volcano":{"queue":"q"}},"extra":1})");
  REQUIRE(t.error.empty());
  CHECK(t.scheduling == json{{"schedulingPolicy", {{"basic", json::object()}}}});
  REQUIRE(t.dropped.size() == 2);
  CHECK(t.dropped[0].find("`backends` block") != std::string::npos);
  CHECK(t.dropped[1].find("`extra`") != std::string::npos);
}

TEST_CASE("an annotation that does not translate is an error", "[unit]") {
  CHECK(TranslateAnnotation("").error.find("does not parse") != std::string::npos);
  CHECK(TranslateAnnotation("[1, 2]").error.find("not an object") != std::string::npos);
  CHECK(TranslateAnnotation(R"({"disruptionMode":{"all":{}}})").error.find("no schedulingPolicy") !=
        std::string::npos);
  CHECK(TranslateAnnotation("{a: [").error.find("does not parse") != std::string::npos);
}

TEST_CASE("in place: same name, spec.scheduling, wasd's marks and server fields gone", "[unit]") {
  const Plan p = MakePlan(Stored(), {});
  REQUIRE(p.ok());
  CHECK(p.kind == PlanKind::kInPlace);
  CHECK(p.name == "web");
  CHECK(p.new_name == "web");
  CHECK(p.ns == "ml");
  CHECK(p.uid == "uid-web");
  CHECK(p.replicas == 4);
  const json& m = p.manifest;
  CHECK(m["apiVersion"] == "apps/v1");
  CHECK(m["kind"] == "Deployment");
  CHECK(m["metadata"] == json{{"name", "web"},
                              {"namespace", "ml"},
                              {"labels", {{"app", "web"}, {"team", "a"}}},
                              {"annotations", {{"owner", "team-a"}}}});
  CHECK(m["spec"]["scheduling"] == json::parse(kAnnotation));
  CHECK(m["spec"]["template"]["metadata"] ==
        json{{"labels", {{"app", "web"}}},
             {"annotations", {{"kubectl.kubernetes.io/restartedAt", "x"}}}});
  CHECK(m["spec"]["replicas"] == 4);
  CHECK(m["spec"]["selector"] == json{{"matchLabels", {{"app", "web"}}}});
  CHECK(m["spec"]["strategy"] == json{{"type", "Recreate"}});
  CHECK_FALSE(m.contains("status"));
  REQUIRE(p.steps.size() == 5);
  CHECK(p.steps[1].find("Delete deployment ml/web (uid uid-web)") == 0);
  CHECK(p.steps[3].find("Create deployment ml/web with spec.scheduling") == 0);
  CHECK(p.downtime.find("yes:") == 0);
  CHECK(p.downtime.find("all 4 old pods") != std::string::npos);
  CHECK(p.downtime.find("once 3 members fit") != std::string::npos);
}

TEST_CASE("side by side: a new name, the same pod labels, old one deleted last", "[unit]") {
  PlanOptions o;
  o.kind = PlanKind::kSideBySide;
  const Plan p = MakePlan(Stored(), o);
  REQUIRE(p.ok());
  CHECK(p.new_name == "web-intree");
  CHECK(p.manifest["metadata"]["name"] == "web-intree");
  CHECK(p.manifest["spec"]["selector"] == json{{"matchLabels", {{"app", "web"}}}});
  CHECK(p.manifest["spec"]["template"]["metadata"]["labels"] == json{{"app", "web"}});
  REQUIRE(p.steps.size() == 5);
  CHECK(p.steps[1].find("Create deployment ml/web-intree") == 0);
  CHECK(p.steps[3].find("Delete deployment ml/web (uid uid-web)") == 0);
  CHECK(p.downtime.find("none expected") == 0);
  bool capacity = false;
  for (const std::string& n : p.notes) {
    capacity = capacity || n.find(
                               "room for 4 more pods (the new gang is placed only when all 3 "
                               "members fit") != std::string::npos;
  }
  CHECK(capacity);

  o.new_name = "web-v2";
  CHECK(MakePlan(Stored(), o).manifest["metadata"]["name"] == "web-v2");
  o.new_name = "web";
  CHECK(MakePlan(Stored(), o).refusal.find("needs a name other than web") != std::string::npos);
  o.new_name = "Web_2";
  CHECK(MakePlan(Stored(), o).refusal.find("not a valid Deployment name") != std::string::npos);
}

TEST_CASE("the plan renders as YAML comments and as JSON", "[unit]") {
  const Plan p = MakePlan(Stored(), {});
  const std::string c = PlanComment(p);
  CHECK(c.find("# wasd migrate: deployment ml/web") == 0);
  CHECK(c.find("\n# Plan: in-place\n") != std::string::npos);
  CHECK(c.find("\n# Downtime: yes:") != std::string::npos);
  CHECK(c.find("\n#   5. Wait until") != std::string::npos);
  for (std::size_t i = 0; i < c.size(); i = c.find('\n', i) + 1) CHECK(c.compare(i, 2, "# ") == 0);
  const json j = PlanJson(p);
  CHECK(j["plan"] == "in-place");
  CHECK(j["newName"] == "web");
  CHECK(j["steps"].size() == 5);
  CHECK(j["manifest"] == p.manifest);
}

TEST_CASE("refusals say why", "[unit]") {
  auto refusal = [](json d) { return MakePlan(d, {}).refusal; };
  json d = Stored();
  d["metadata"]["annotations"].erase("wasd.io/scheduling");
  CHECK(refusal(d).find("deployment ml/web: is not managed by wasd (no annotation "
                        "wasd.io/scheduling)") == 0);

  d = Stored();
  d["spec"]["scheduling"] = {{"schedulingPolicy", {{"gang", json::object()}}}};
  CHECK(refusal(d).find("already carries spec.scheduling") != std::string::npos);
  CHECK(refusal(d).find("both carriers") != std::string::npos);

  d = Stored();
  d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "volcano";
  CHECK(refusal(d).find("runs on wasd's volcano backend; the in-tree controller creates only "
                        "native") != std::string::npos);
  d = Stored();
  d["spec"]["template"]["metadata"]["labels"].erase("wasd.io/backend");
  d["metadata"]["annotations"]["wasd.io/backend"] = "kai";
  CHECK(refusal(d).find("kai backend") != std::string::npos);

  d = Stored();
  d["metadata"]["deletionTimestamp"] = "2026-12-03T00:00:00Z";
  CHECK(refusal(d).find("being deleted") != std::string::npos);

  d = Stored();
  d["metadata"]["ownerReferences"] =
      json::array({{{"kind", "Rollout"}, {"name", "r"}, {"uid", "u"}, {"controller", true}}});
  CHECK(refusal(d).find("controlled by Rollout r") != std::string::npos);

  d = Stored();
  d["spec"]["selector"]["matchExpressions"] =
      json::array({{{"key", "wasd.io/managed"}, {"operator", "Exists"}}});
  CHECK(refusal(d).find("names the label wasd.io/managed") != std::string::npos);

  d = Stored();
  d["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "x"}};
  CHECK(refusal(d).find("spec.schedulingGroup") != std::string::npos);

  CHECK(refusal(Stored("schedulingPolicy: [")).find("does not parse") != std::string::npos);
  CHECK(refusal(json::array()) == "not a Deployment with a name and a spec");
}

TEST_CASE("a non-controller owner and finalizers carry over", "[unit]") {
  json d = Stored();
  d["metadata"]["ownerReferences"] =
      json::array({{{"kind", "App"}, {"name", "a"}, {"uid", "u"}, {"apiVersion", "x/v1"}}});
  d["metadata"]["finalizers"] = json::array({"example.com/keep", "foregroundDeletion"});
  const Plan p = MakePlan(d, {});
  REQUIRE(p.ok());
  CHECK(p.manifest["metadata"]["ownerReferences"] == d["metadata"]["ownerReferences"]);
  CHECK(p.manifest["metadata"]["finalizers"] == json::array({"example.com/keep"}));
}

TEST_CASE("a basic policy states no gang quorum", "[unit]") {
  const Plan p = MakePlan(Stored(R"({"schedulingPolicy":{"basic":{}}})"), {});
  REQUIRE(p.ok());
  CHECK(p.downtime.find("members fit") == std::string::npos);
  CHECK(p.manifest["spec"]["scheduling"] ==
        json{{"schedulingPolicy", {{"basic", json::object()}}}});
}

}  // namespace
}  // namespace wasd::migrate
