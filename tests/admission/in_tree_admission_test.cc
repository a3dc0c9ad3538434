// docs/design.md Q22 at the webhook: spec.scheduling belongs to
// kube-controller-manager's Workload integration (WorkloadWithDeployment),
// wasd's carrier is the annotation alone. A field-only Deployment is never
// marked and never denied (warnings only), one with both is denied with the
// way forward, its pods are left alone, and with
// --in-tree-deployment-integration a new annotation Deployment is told
// about spec.scheduling and `wasd migrate`.
#include <catch2/catch.hpp>
#include <string>

#include "admission/review.h"
#include "tests/admission/review_fixtures.h"

using nlohmann::json;
using wasd::admission::Options;
using wasd::admission::Review;
using wasd::admission::Webhook;
using wasd::testing::kDeployments;
using wasd::testing::kPods;
using wasd::testing::ResponseOf;
using wasd::testing::ReviewOf;
using wasd::testing::WarningsOf;
using wasd::testing::WebDeployment;

namespace {

const json kGang = {{"schedulingPolicy", {{"gang", json::object()}}}};
constexpr char kAnnotation[] = R"({"schedulingPolicy":{"gang":{}}})";

json InTree(json d = WebDeployment()) {
  d["spec"]["scheduling"] = kGang;
  return d;
}

std::vector<Options> BothDecoders(bool in_tree_flag = false) {
  Options pruned;
  pruned.in_tree_deployment_integration = in_tree_flag;
  Options whole = pruned;
  whole.prune_unread_fields = false;
  return {pruned, whole};
}

json Answer(Webhook w, const std::string& op, const json& d, const Options& o,
            const json& old = nullptr) {
  return ResponseOf(Review(w, ReviewOf(kDeployments, op, d, old).dump(), o));
}

}  // namespace

TEST_CASE("Q22: spec.scheduling alone is left to the in-tree controller", "[unit]") {
  for (const Options& o : BothDecoders()) {
    INFO("pruned " << o.prune_unread_fields);
    // Mutating: no marker, no backend label, no scheduler.
    json resp = Answer(Webhook::kMutateDeployment, "CREATE", InTree(), o);
    CHECK(resp["allowed"] == true);
    CHECK_FALSE(resp.contains("patch"));
    // Validating: what the KEP's rules would refuse is a warning, never a denial.
    json rolling = InTree();
    rolling["spec"]["strategy"]["type"] = "RollingUpdate";
    resp = Answer(Webhook::kValidateDeployment, "CREATE", rolling, o);
    CHECK(resp["allowed"] == true);
    const std::string warnings = WarningsOf(resp);
    CHECK_THAT(warnings,
               Catch::Contains("spec.scheduling is managed by kube-controller-manager "
                               "(WorkloadWithDeployment), not wasd; judged by the KEP's rules, "
                               "wasd finds: spec.strategy.type: Invalid value: \"RollingUpdate\""));
    // UPDATE too (a change wasd would refuse: the policy), and anything only a
    // wasd backend would check (the annotation wasd.io/backend) is not looked at.
    json basic = InTree();
    basic["spec"]["scheduling"] = {{"schedulingPolicy", {{"basic", json::object()}}}};
    basic["metadata"]["annotations"]["wasd.io/backend"] = "slurm";
    resp = Answer(Webhook::kValidateDeployment, "UPDATE", basic, o, InTree());
    CHECK(resp["allowed"] == true);
    CHECK_THAT(WarningsOf(resp), Catch::Contains("schedulingPolicy"));
    CHECK_THAT(WarningsOf(resp), !Catch::Contains("wasd.io/backend]"));
    // Removing spec.scheduling is kube-apiserver's to judge (the field is
    // the in-tree integration's): allowed, at most a warning.
    resp = Answer(Webhook::kValidateDeployment, "UPDATE", WebDeployment(), o, InTree());
    CHECK(resp["allowed"] == true);
    CHECK_THAT(WarningsOf(resp), Catch::Contains("cannot be cleared once set"));
    CHECK_THAT(WarningsOf(resp), Catch::Contains("managed by kube-controller-manager"));
    // A valid one: allowed, no denial, the usual hint.
    resp = Answer(Webhook::kValidateDeployment, "CREATE", InTree(), o);
    CHECK(resp["allowed"] == true);
    CHECK_THAT(WarningsOf(resp), Catch::Contains("gang minCount not set"));
  }
}

TEST_CASE("Q22: spec.scheduling and the annotation together are denied", "[unit]") {
  for (const Options& o : BothDecoders()) {
    json both = InTree(WebDeployment({{"wasd.io/scheduling", kAnnotation}}));
    const json resp = Answer(Webhook::kValidateDeployment, "CREATE", both, o);
    CHECK(resp["allowed"] == false);
    REQUIRE(resp["status"]["details"]["causes"].size() == 1);
    CHECK(resp["status"]["details"]["causes"][0]["field"] == "spec.scheduling");
    const std::string message = resp["status"]["message"].get<std::string>();
    CHECK_THAT(message,
               Catch::StartsWith("spec.scheduling: Forbidden: may not be set together with "
                                 "metadata.annotations[wasd.io/scheduling]"));
    CHECK_THAT(message, Catch::Contains("remove the annotation to leave it to the in-tree "
                                        "controller, or remove spec.scheduling to keep wasd"));
    CHECK_THAT(message, Catch::Contains("`wasd migrate deployment/web`"));
    // Equal or not, it is the same denial (no more "must equal").
    json equal = both;
    equal["metadata"]["annotations"]["wasd.io/scheduling"] = kGang.dump();
    CHECK(Answer(Webhook::kValidateDeployment, "CREATE", equal, o)["allowed"] == false);
    // An unchanged stored object with both is not denied on an unrelated update (ratchet).
    json relabelled = both;
    relabelled["metadata"]["labels"]["team"] = "ml";
    CHECK(Answer(Webhook::kValidateDeployment, "UPDATE", relabelled, o, both)["allowed"] == true);
  }
}

TEST_CASE("Q22: pods of an in-tree Deployment are not linked or gated", "[unit]") {
  // The in-tree controller sets spec.schedulingGroup on its pods; without
  // wasd's marker (never set for spec.scheduling) the pod webhook does nothing.
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"generateName", "web-5d8f7c9b6-"},
                {"namespace", "ml"},
                {"labels", {{"app", "web"}, {"pod-template-hash", "5d8f7c9b6"}}},
                {"ownerReferences",
                 {{{"apiVersion", "apps/v1"},
                   {"kind", "ReplicaSet"},
                   {"name", "web-5d8f7c9b6"},
                   {"uid", "rs-uid"},
                   {"controller", true}}}}}},
              {"spec",
               {{"containers", {{{"name", "c"}, {"image", "img:v1"}}}},
                {"schedulingGroup", {{"podGroupName", "web-5d8f7c9b6"}}}}}};
  for (const Options& o : BothDecoders(true)) {
    const json resp =
        ResponseOf(Review(Webhook::kMutatePod, ReviewOf(kPods, "CREATE", pod).dump(), o));
    CHECK(resp["allowed"] == true);
    CHECK_FALSE(resp.contains("patch"));
    // The control: the same pod with wasd's marker is patched.
    json marked = pod;
    marked["metadata"]["labels"]["wasd.io/managed"] = "true";
    marked["spec"].erase("schedulingGroup");
    CHECK(ResponseOf(Review(Webhook::kMutatePod, ReviewOf(kPods, "CREATE", marked).dump(), o))
              .contains("patch"));
  }
}

TEST_CASE("Q22: --in-tree-deployment-integration warns a new annotation Deployment", "[unit]") {
  const json d = WebDeployment({{"wasd.io/scheduling", kAnnotation}});
  for (bool flag : {false, true}) {
    for (const Options& o : BothDecoders(flag)) {
      const json resp = Answer(Webhook::kValidateDeployment, "CREATE", d, o);
      CHECK(resp["allowed"] == true);
      const std::string warnings = WarningsOf(resp);
      const bool warned = warnings.find("spec.scheduling") != std::string::npos &&
                          warnings.find("`wasd migrate deployment/web`") != std::string::npos;
      CHECK(warned == flag);
      // Existing ones are not nagged on every update.
      json changed = d;
      changed["spec"]["replicas"] = 4;
      CHECK(WarningsOf(Answer(Webhook::kValidateDeployment, "UPDATE", changed, o, d))
                .find("wasd migrate") == std::string::npos);
      // Nor is a Deployment without wasd's annotation.
      CHECK(WarningsOf(Answer(Webhook::kValidateDeployment, "CREATE", WebDeployment(), o))
                .find("wasd migrate") == std::string::npos);
    }
  }
}
