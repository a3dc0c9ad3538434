// docs/design.md Q18 (review finding L2): each path answers only its resource,
// read from request.resource and request.kind; any other request is allowed
// without a patch and flagged for one log line (Summary::out_of_scope).
#include <catch2/catch.hpp>
#include <string>

#include "admission/review.h"
#include "tests/admission/review_fixtures.h"

using nlohmann::json;
using wasd::admission::Options;
using wasd::admission::Result;
using wasd::admission::Review;
using wasd::admission::Webhook;
using wasd::testing::ReviewOf;
using wasd::testing::Target;

namespace {

// A gang config the rules deny (RollingUpdate), on any apps/v1 workload.
json GangWorkload(const std::string& kind) {
  json o = wasd::testing::WebDeployment(
      {{"wasd.io/scheduling", R"({"schedulingPolicy":{"gang":{"minCount":5}}})"}});
  o["kind"] = kind;
  o["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  return o;
}

json ManagedPod() {
  return json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "web-5d8f7c9b6-", "namespace": "ml",
                 "labels": {"app": "web", "pod-template-hash": "5d8f7c9b6", "wasd.io/managed": "true"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7c9b6",
                                      "uid": "rs-uid", "controller": true}]},
    "spec": {"containers": [{"name": "c", "image": "img:v1"}]}})");
}

void CheckIgnored(const Result& r, const std::string& what) {
  const json resp = wasd::testing::ResponseOf(r);
  CHECK(resp.at("allowed") == true);
  CHECK_FALSE(resp.contains("patch"));
  CHECK_FALSE(resp.contains("status"));
  CHECK_FALSE(resp.contains("warnings"));
  CHECK(r.summary.allowed);
  CHECK_FALSE(r.summary.patched);
  CHECK(r.pending == nullptr);
  CHECK(r.summary.out_of_scope == what);
}

}  // namespace

TEST_CASE("the Deployment paths leave other kinds alone", "[unit]") {
  const Target statefulsets{"apps", "v1", "StatefulSet", "statefulsets", ""};
  const Target replicasets{"apps", "v1", "ReplicaSet", "replicasets", ""};
  for (const Target& t : {statefulsets, replicasets}) {
    INFO(t.kind);
    const json object = GangWorkload(t.kind);
    const std::string what = "apps/v1 " + t.resource + " (kind apps/v1 " + t.kind + ")";
    for (const char* op : {"CREATE", "UPDATE"}) {
      INFO(op);
      const std::string body = ReviewOf(t, op, object, object).dump();
      // Judged as a Deployment, this would be denied (RollingUpdate) ...
      CheckIgnored(Review(Webhook::kValidateDeployment, body, Options{}), what);
      // ... and patched with the marker label.
      CheckIgnored(Review(Webhook::kMutateDeployment, body, Options{}), what);
    }
  }
}

TEST_CASE("each path's own resource is still judged", "[unit]") {
  const json d = GangWorkload("Deployment");
  for (const Target& t : {wasd::testing::kDeployments, wasd::testing::kDeploymentStatus}) {
    INFO(t.sub_resource);
    const Result r = Review(Webhook::kValidateDeployment,
                            ReviewOf(t, "UPDATE", d, json::object()).dump(), Options{});
    CHECK(wasd::testing::ResponseOf(r).at("allowed") == false);
    CHECK(r.summary.out_of_scope.empty());
  }
  const Result created = Review(Webhook::kMutateDeployment,
                                ReviewOf(wasd::testing::kDeployments, "CREATE", d).dump(), {});
  CHECK(created.summary.patched);
  const Result pod = Review(Webhook::kMutatePod,
                            ReviewOf(wasd::testing::kPods, "CREATE", ManagedPod()).dump(), {});
  CHECK(pod.summary.patched);
  // deployments/scale: kind autoscaling/v1 Scale on the deployments resource.
  json scale = ReviewOf({"autoscaling", "v1", "Scale", "deployments", "scale"}, "UPDATE",
                        {{"spec", {{"replicas", 1}}}}, {{"spec", {{"replicas", 3}}}});
  scale["request"]["resource"]["group"] = "apps";
  const Result pending = Review(Webhook::kValidateDeployment, scale.dump(), Options{});
  CHECK(pending.pending != nullptr);
  CHECK(pending.summary.out_of_scope.empty());
}

TEST_CASE("subresources and kinds a path does not answer", "[unit]") {
  const json d = GangWorkload("Deployment");
  // The mutating Deployment path answers the main resource only.
  CheckIgnored(Review(Webhook::kMutateDeployment,
                      ReviewOf(wasd::testing::kDeploymentStatus, "UPDATE", d, d).dump(), {}),
               "apps/v1 deployments/status (kind apps/v1 Deployment)");
  // A Scale under another resource, a Deployment under the scale subresource.
  CheckIgnored(
      Review(Webhook::kValidateDeployment,
             ReviewOf({"apps", "v1", "Scale", "replicasets", "scale"}, "UPDATE", d, d).dump(), {}),
      "apps/v1 replicasets/scale (kind apps/v1 Scale)");
  CheckIgnored(
      Review(Webhook::kValidateDeployment,
             ReviewOf({"apps", "v1", "Deployment", "deployments", "scale"}, "UPDATE", d, d).dump(),
             {}),
      "apps/v1 deployments/scale (kind apps/v1 Deployment)");
  // The pod path answers pods, not their subresources or other core kinds.
  const json pod = ManagedPod();
  CheckIgnored(
      Review(Webhook::kMutatePod,
             ReviewOf({"", "v1", "Pod", "pods", "ephemeralcontainers"}, "CREATE", pod).dump(), {}),
      "v1 pods/ephemeralcontainers (kind v1 Pod)");
  CheckIgnored(
      Review(Webhook::kMutatePod,
             ReviewOf({"", "v1", "PodTemplate", "podtemplates", ""}, "CREATE", pod).dump(), {}),
      "v1 podtemplates (kind v1 PodTemplate)");
  // Pods are not Deployments.
  CheckIgnored(
      Review(Webhook::kMutateDeployment, ReviewOf(wasd::testing::kPods, "CREATE", d).dump(), {}),
      "v1 pods (kind v1 Pod)");
  // A request that names no resource at all is not judged either.
  json bare = ReviewOf(wasd::testing::kDeployments, "CREATE", d);
  bare["request"].erase("resource");
  bare["request"].erase("kind");
  CheckIgnored(Review(Webhook::kValidateDeployment, bare.dump(), {}), "no resource (no kind)");
}
