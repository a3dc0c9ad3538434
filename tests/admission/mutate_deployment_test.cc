// /mutate-apps-v1-deployment beyond marking a new Deployment (review_test.cc):
// L6 (an UPDATE adds the template marker only when the template changes
// anyway, so an unrelated write never rolls out a new ReplicaSet) and Q15 /
// M2 (a marker without a carrier is removed, under the same rule).
#include <catch2/catch.hpp>
#include <string>

#include "admission/review.h"
#include "tests/admission/review_fixtures.h"

using nlohmann::json;
using wasd::admission::Review;
using wasd::admission::Webhook;
using wasd::testing::kDeployments;
using wasd::testing::PatchedBy;
using wasd::testing::ResponseOf;
using wasd::testing::ReviewOf;
using wasd::testing::WarningsOf;
using wasd::testing::WebDeployment;

namespace {

const json kCarrier = {{"wasd.io/scheduling", R"({"schedulingPolicy":{"gang":{"minCount":3}}})"}};

json Mutate(const std::string& op, const json& object, const json& old_object = nullptr) {
  return ResponseOf(Review(Webhook::kMutateDeployment,
                           ReviewOf(kDeployments, op, object, old_object).dump(), {}));
}

const json* Label(const json& meta, const char* key = "wasd.io/managed") {
  auto labels = meta.find("labels");
  if (labels == meta.end() || !labels->contains(key)) return nullptr;
  return &labels->at(key);
}

json WithMarker(json d, bool on_deployment, bool on_template) {
  if (on_deployment) d["metadata"]["labels"]["wasd.io/managed"] = "true";
  if (on_template) d["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] = "true";
  return d;
}

}  // namespace

TEST_CASE("L6: an UPDATE that leaves the pod template alone does not mark it", "[unit]") {
  // Created before wasd was installed: annotation, no marker anywhere.
  const json old_d = WebDeployment(kCarrier);
  SECTION("unrelated write (kubectl annotate): Deployment label only, and a warning") {
    json d = old_d;
    d["metadata"]["annotations"]["team"] = "ml";
    const json resp = Mutate("UPDATE", d, old_d);
    CHECK(resp.at("allowed") == true);
    const json out = PatchedBy(resp, d);
    REQUIRE(Label(out["metadata"]) != nullptr);
    CHECK(*Label(out["metadata"]) == "true");
    CHECK(out["spec"]["template"] == d["spec"]["template"]);  // no new ReplicaSet
    const std::string warnings = WarningsOf(resp);
    CHECK(warnings.find("next rollout") != std::string::npos);
    CHECK(warnings.find("kubectl rollout restart deployment/web") != std::string::npos);
  }
  SECTION("a template change (new image): the template is marked too") {
    json d = old_d;
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "img:v2";
    const json resp = Mutate("UPDATE", d, old_d);
    const json out = PatchedBy(resp, d);
    CHECK(*Label(out["spec"]["template"]["metadata"]) == "true");
    CHECK(*Label(out["metadata"]) == "true");
    CHECK_FALSE(resp.contains("warnings"));
  }
  SECTION("kubectl rollout restart (a template annotation): marked") {
    json d = old_d;
    d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
        "2026-12-01T10:00:00Z";
    const json out = PatchedBy(Mutate("UPDATE", d, old_d), d);
    CHECK(*Label(out["spec"]["template"]["metadata"]) == "true");
  }
  SECTION("already marked: nothing to do, nothing to say") {
    const json d = WithMarker(old_d, true, true);
    const json resp = Mutate("UPDATE", d, d);
    CHECK_FALSE(resp.contains("patch"));
    CHECK_FALSE(resp.contains("warnings"));
  }
  SECTION("CREATE is unchanged: both marked, no warning") {
    const json resp = Mutate("CREATE", old_d);
    const json out = PatchedBy(resp, old_d);
    CHECK(*Label(out["spec"]["template"]["metadata"]) == "true");
    CHECK(*Label(out["metadata"]) == "true");
    CHECK_FALSE(resp.contains("warnings"));
  }
}

TEST_CASE("Q15: a marker without a carrier is removed", "[unit]") {
  const json plain = WebDeployment();  // neither annotation nor spec.scheduling
  SECTION("CREATE (an exported manifest with the annotation dropped): both labels removed") {
    json d = WithMarker(plain, true, true);
    d["metadata"]["labels"]["team"] = "ml";
    const json resp = Mutate("CREATE", d);
    CHECK(resp.at("allowed") == true);
    const json out = PatchedBy(resp, d);
    CHECK(Label(out["metadata"]) == nullptr);
    CHECK(Label(out["spec"]["template"]["metadata"]) == nullptr);
    CHECK(out["metadata"]["labels"] == json{{"team", "ml"}});  // other labels kept
    CHECK(out["spec"]["template"]["metadata"]["labels"] == json{{"app", "web"}});
    const std::string warnings = WarningsOf(resp);
    CHECK(warnings.find("wasd.io/managed") != std::string::npos);
    CHECK(warnings.find("removed") != std::string::npos);
  }
  SECTION("any value of the label counts") {
    json d = plain;
    d["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] = "false";
    const json out = PatchedBy(Mutate("CREATE", d), d);
    CHECK(Label(out["spec"]["template"]["metadata"]) == nullptr);
  }
  SECTION("UPDATE with a template change: removed") {
    const json old_d = WithMarker(plain, true, true);
    json d = old_d;
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "img:v2";
    const json out = PatchedBy(Mutate("UPDATE", d, old_d), d);
    CHECK(Label(out["metadata"]) == nullptr);
    CHECK(Label(out["spec"]["template"]["metadata"]) == nullptr);
  }
  SECTION("UPDATE leaving the template alone: no rollout; both kept, and a warning") {
    const json d = WithMarker(plain, true, true);
    const json resp = Mutate("UPDATE", d, d);
    CHECK_FALSE(resp.contains("patch"));
    CHECK(WarningsOf(resp).find("kubectl rollout restart deployment/web") != std::string::npos);
  }
  SECTION("only the Deployment's own label: removed on UPDATE too") {
    const json d = WithMarker(plain, true, false);
    const json out = PatchedBy(Mutate("UPDATE", d, d), d);
    CHECK(Label(out["metadata"]) == nullptr);
    CHECK(out["spec"]["template"] == d["spec"]["template"]);
  }
  SECTION("no marker, no carrier: nothing") {
    const json resp = Mutate("CREATE", plain);
    CHECK_FALSE(resp.contains("patch"));
    CHECK_FALSE(resp.contains("warnings"));
  }
  SECTION("spec.scheduling is not wasd's carrier (Q22): its markers are removed") {
    json d = WithMarker(plain, true, true);
    d["spec"]["scheduling"] = {{"schedulingPolicy", {{"gang", json::object()}}}};
    const json resp = Mutate("CREATE", d);
    const json out = PatchedBy(resp, d);
    CHECK(Label(out["metadata"]) == nullptr);
    CHECK(Label(out["spec"]["template"]["metadata"]) == nullptr);
    CHECK(out["spec"]["scheduling"] == d["spec"]["scheduling"]);
  }
}
