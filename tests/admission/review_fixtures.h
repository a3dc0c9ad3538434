// Test support for the admission tests: AdmissionReview requests as the API
// server sends them, a Deployment, and reading an answer (its response, its
// patch applied to the original object).
#ifndef WASD_TESTS_ADMISSION_REVIEW_FIXTURES_H_
#define WASD_TESTS_ADMISSION_REVIEW_FIXTURES_H_

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "admission/review.h"
#include "tests/admission/patch_apply.h"

namespace wasd::testing {

inline constexpr const char* kReviewUid = "705ab4f5-6393-11e8-b7cc-42010a800002";

// request.kind and request.resource of a request.
struct Target {
  std::string group, version, kind, resource, sub_resource;
};

inline const Target kDeployments{"apps", "v1", "Deployment", "deployments", ""};
inline const Target kDeploymentStatus{"apps", "v1", "Deployment", "deployments", "status"};
inline const Target kPods{"", "v1", "Pod", "pods", ""};

inline nlohmann::json ReviewOf(const Target& t, const std::string& op, nlohmann::json object,
                               nlohmann::json old_object = nullptr) {
  nlohmann::json req = {
      {"uid", kReviewUid},
      {"kind", {{"group", t.group}, {"version", t.version}, {"kind", t.kind}}},
      {"resource", {{"group", t.group}, {"version", t.version}, {"resource", t.resource}}},
      {"name", "web"},
      {"namespace", "ml"},
      {"operation", op},
      {"userInfo", {{"username", "kubernetes-admin"}, {"groups", {"system:masters"}}}},
      {"object", std::move(object)},
      {"oldObject", std::move(old_object)},
      {"dryRun", false}};
  if (!t.sub_resource.empty()) req["subResource"] = t.sub_resource;
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", req}};
}

// A Recreate Deployment "web" with 3 replicas; `annotations` when not empty.
inline nlohmann::json WebDeployment(nlohmann::json annotations = nlohmann::json::object()) {
  nlohmann::json d = nlohmann::json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "ml", "uid": "6f1e2d3c-1111-4222-8333-944455556666"},
    "spec": {"replicas": 3, "strategy": {"type": "Recreate"},
             "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "img:v1"}]}}}})");
  if (!annotations.empty()) d["metadata"]["annotations"] = std::move(annotations);
  return d;
}

// The response of a 200 answer.
inline nlohmann::json ResponseOf(const admission::Result& r) {
  REQUIRE(r.http_status == 200);
  const nlohmann::json doc = nlohmann::json::parse(r.body);
  CHECK(doc.at("apiVersion") == "admission.k8s.io/v1");
  CHECK(doc.at("kind") == "AdmissionReview");
  REQUIRE(doc.at("response").at("uid") == kReviewUid);
  return doc.at("response");
}

// `original` with the response's patch applied (unchanged without a patch).
inline nlohmann::json PatchedBy(const nlohmann::json& response, const nlohmann::json& original) {
  if (!response.contains("patch")) {
    CHECK_FALSE(response.contains("patchType"));
    return original;
  }
  CHECK(response.at("patchType") == "JSONPatch");
  const nlohmann::json patch =
      nlohmann::json::parse(DecodeBase64(response.at("patch").get<std::string>()));
  return ApplyAddPatch(original, patch);
}

// The response's warnings joined, for substring checks.
inline std::string WarningsOf(const nlohmann::json& response) {
  std::string out;
  for (const auto& w : response.value("warnings", nlohmann::json::array())) {
    out += w.get<std::string>() + "\n";
  }
  return out;
}

}  // namespace wasd::testing

#endif  // WASD_TESTS_ADMISSION_REVIEW_FIXTURES_H_
