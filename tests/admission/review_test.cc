// Tests of the admission protocol layer: envelope decoding/encoding, HTTP 400
// answers, the mutating handlers (patches applied to the original object),
// and the scale round trip.
#include "admission/review.h"

#include <catch2/catch.hpp>
#include <string>

#include "patch_apply.h"
#include "tests/admission/review_fixtures.h"
#include "workloadbuilder/names.h"

using nlohmann::json;
using wasd::admission::FinishScale;
using wasd::admission::Options;
using wasd::admission::Result;
using wasd::admission::Review;
using wasd::admission::Webhook;
using wasd::testing::WarningsOf;

namespace {

// A review of `object` as the API server sends it: a Deployment (apps/v1
// deployments) or a Pod (v1 pods, with no name yet).
json Request(const std::string& op, json object, json old_object = nullptr,
             const std::string& kind = "Deployment") {
  json review =
      wasd::testing::ReviewOf(kind == "Pod" ? wasd::testing::kPods : wasd::testing::kDeployments,
                              op, std::move(object), std::move(old_object));
  if (kind == "Pod") review["request"]["name"] = "";
  return review;
}

json Deployment(json annotations = json::object(), json labels = nullptr) {
  json d = wasd::testing::WebDeployment(std::move(annotations));
  if (!labels.is_null()) d["metadata"]["labels"] = labels;
  return d;
}

json Pod(json labels, json owners, json spec_extra = json::object()) {
  json spec = {{"containers", {{{"name", "c"}, {"image", "img:v1"}}}}};
  spec.update(spec_extra);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"generateName", "web-5d8f7c9b6-"},
            {"namespace", "ml"},
            {"labels", std::move(labels)},
            {"ownerReferences", std::move(owners)}}},
          {"spec", spec}};
}

json RsOwner(const std::string& name = "web-5d8f7c9b6", bool controller = true,
             const std::string& kind = "ReplicaSet") {
  return {{"apiVersion", "apps/v1"},
          {"kind", kind},
          {"name", name},
          {"uid", "rs-uid"},
          {"controller", controller},
          {"blockOwnerDeletion", true}};
}

json ManagedLabels() {
  return {{"app", "web"}, {"pod-template-hash", "5d8f7c9b6"}, {"wasd.io/managed", "true"}};
}

json Response(const Result& r) { return wasd::testing::ResponseOf(r); }

// Applies the response's patch to `original` (no patch: unchanged).
json Patched(const json& response, const json& original) {
  return wasd::testing::PatchedBy(response, original);
}

const char* kConfig = R"({"schedulingPolicy":{"gang":{"minCount":3}}})";

}  // namespace

TEST_CASE("paths map to webhooks, query string ignored", "[unit]") {
  Webhook w;
  CHECK(wasd::admission::WebhookForPath("/validate-apps-v1-deployment?timeout=10s", &w));
  CHECK(w == Webhook::kValidateDeployment);
  CHECK(wasd::admission::WebhookForPath("/mutate-v1-pod", &w));
  CHECK(w == Webhook::kMutatePod);
  CHECK(wasd::admission::WebhookForPath("/mutate-apps-v1-deployment", &w));
  CHECK(w == Webhook::kMutateDeployment);
  CHECK_FALSE(wasd::admission::WebhookForPath("/validate", &w));
  CHECK_FALSE(wasd::admission::WebhookForPath("/mutate-v1-pod/extra", &w));
}

TEST_CASE("bodies that are not an AdmissionReview get HTTP 400, never an allowing review",
          "[unit]") {
  const Options opts;
  const std::string deep(100000, '[');
  const char* bad[] = {
      "",
      "not json",
      "[]",
      "42",
      "{}",
      R"({"apiVersion":"v1","kind":"AdmissionReview","request":{"uid":"u"}})",
      R"({"apiVersion":"admission.k8s.io/v1","kind":"Status","request":{"uid":"u"}})",
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}})",
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":5}})"};
  for (const char* body : bad) {
    for (Webhook w :
         {Webhook::kValidateDeployment, Webhook::kMutateDeployment, Webhook::kMutatePod}) {
      INFO(body);
      const Result r = Review(w, body, opts);
      CHECK(r.http_status == 400);
      CHECK(r.body.find('\n') == r.body.size() - 1);  // one line
      CHECK(r.body.find("allowed") == std::string::npos);
    }
  }
  const Result r = Review(Webhook::kValidateDeployment, deep, opts);
  CHECK(r.http_status == 400);
  CHECK(r.body.find("nested deeper") != std::string::npos);
  // A request for the path's own resource whose object is not an object.
  for (Webhook w :
       {Webhook::kValidateDeployment, Webhook::kMutateDeployment, Webhook::kMutatePod}) {
    json req = Request("CREATE", 7, nullptr, w == Webhook::kMutatePod ? "Pod" : "Deployment");
    const Result bad_object = Review(w, req.dump(), opts);
    CHECK(bad_object.http_status == 400);
    CHECK(bad_object.body.find("request.object must be an object") != std::string::npos);
  }
}

TEST_CASE("v1beta1 reviews are answered in v1beta1", "[unit]") {
  json req = Request("CREATE", Deployment());
  req["apiVersion"] = "admission.k8s.io/v1beta1";
  const Result r = Review(Webhook::kValidateDeployment, req.dump(), Options{});
  REQUIRE(r.http_status == 200);
  CHECK(json::parse(r.body)["apiVersion"] == "admission.k8s.io/v1beta1");
}

TEST_CASE("a Deployment without a carrier is allowed without a patch", "[unit]") {
  for (Webhook w : {Webhook::kValidateDeployment, Webhook::kMutateDeployment}) {
    const Result r = Review(w, Request("CREATE", Deployment()).dump(), Options{});
    const json resp = Response(r);
    CHECK(resp["allowed"] == true);
    CHECK_FALSE(resp.contains("patch"));
    CHECK_FALSE(resp.contains("status"));
  }
}

TEST_CASE("denial: 422 Invalid with one cause per field error", "[unit]") {
  json d = Deployment({{"wasd.io/scheduling", R"({"schedulingPolicy":{"gang":{"minCount":4}}})"}});
  d["spec"]["replicas"] = 2;
  d["spec"]["strategy"] = {{"type", "RollingUpdate"},
                           {"rollingUpdate", {{"maxSurge", "25%"}, {"maxUnavailable", "25%"}}}};
  const Result r = Review(Webhook::kValidateDeployment, Request("CREATE", d).dump(), Options{});
  const json resp = Response(r);
  CHECK(resp["allowed"] == false);
  CHECK_FALSE(resp.contains("patch"));
  const json& st = resp["status"];
  CHECK(st["code"] == 422);
  CHECK(st["reason"] == "Invalid");
  CHECK(st["status"] == "Failure");
  const std::string msg = st["message"];
  CHECK(msg.front() == '[');
  CHECK(msg.find("metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount: "
                 "Invalid value: 4: must be less than or equal to spec.replicas (2)") !=
        std::string::npos);
  CHECK(msg.find("spec.strategy.type: Invalid value: \"RollingUpdate\": gang scheduling requires "
                 "Recreate") != std::string::npos);
  REQUIRE(st["details"]["causes"].size() == 2);
  for (const auto& c : st["details"]["causes"]) {
    CHECK(c["reason"] == "FieldValueInvalid");
    CHECK(c["message"].get<std::string>().rfind("Invalid value: ", 0) == 0);
  }
  CHECK(r.summary.code == 422);
  CHECK_FALSE(r.summary.allowed);
}

// The validating webhook reads only the paths its rules need (ValidateDeploymentReads):
// the template's own claims are one of them, or every group claim looks unused.
TEST_CASE("validation: a group claim is unused unless the pod template has it", "[unit]") {
  json d = Deployment(
      {{"wasd.io/scheduling",
        R"({"schedulingPolicy":{"gang":{}},"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"}]})"}});
  const std::string unused =
      "resourceClaims[0]: no equal claim in spec.template.spec.resourceClaims";
  json resp =
      Response(Review(Webhook::kValidateDeployment, Request("CREATE", d).dump(), Options{}));
  CHECK(resp["allowed"] == true);
  CHECK(WarningsOf(resp).find(unused) != std::string::npos);
  d["spec"]["template"]["spec"]["resourceClaims"] =
      json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "t"}}});
  resp = Response(Review(Webhook::kValidateDeployment, Request("CREATE", d).dump(), Options{}));
  CHECK(resp["allowed"] == true);
  CHECK(WarningsOf(resp).find("DRAWorkloadResourceClaims") != std::string::npos);
  CHECK(WarningsOf(resp).find(unused) == std::string::npos);
}

TEST_CASE("Deployment mutation marks opted-in Deployments", "[unit]") {
  SECTION("labels maps absent: created") {
    json d = Deployment({{"wasd.io/scheduling", kConfig}});
    d["spec"]["template"].erase("metadata");
    const json resp = Response(Review(Webhook::kMutateDeployment, Request("CREATE", d).dump(), {}));
    const json out = Patched(resp, d);
    CHECK(out["metadata"]["labels"]["wasd.io/managed"] == "true");
    CHECK(out["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] == "true");
    CHECK(out["metadata"]["annotations"] == d["metadata"]["annotations"]);
  }
  SECTION("existing labels kept, marker added, other value overwritten") {
    json d =
        Deployment({{"wasd.io/scheduling", kConfig}}, {{"team", "a"}, {"wasd.io/managed", "no"}});
    const json resp = Response(Review(Webhook::kMutateDeployment, Request("CREATE", d).dump(), {}));
    const json out = Patched(resp, d);
    CHECK(out["metadata"]["labels"] == json{{"team", "a"}, {"wasd.io/managed", "true"}});
    CHECK(out["spec"]["template"]["metadata"]["labels"] ==
          json{{"app", "web"}, {"wasd.io/managed", "true"}});
  }
  SECTION("already marked: no patch (idempotent UPDATE)") {
    json d = Deployment({{"wasd.io/scheduling", kConfig}}, {{"wasd.io/managed", "true"}});
    d["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] = "true";
    const json resp =
        Response(Review(Webhook::kMutateDeployment, Request("UPDATE", d, d).dump(), {}));
    CHECK(resp["allowed"] == true);
    CHECK_FALSE(resp.contains("patch"));
  }
  SECTION("invalid carrier still marks (validation is the other webhook's job)") {
    json d = Deployment({{"wasd.io/scheduling", "{not json or yaml: ["}});
    const json resp = Response(Review(Webhook::kMutateDeployment, Request("CREATE", d).dump(), {}));
    CHECK(Patched(resp, d)["metadata"]["labels"]["wasd.io/managed"] == "true");
  }
  SECTION("spec.scheduling alone never marks (Q22: the in-tree controller's)") {
    json d = Deployment();
    d["spec"]["scheduling"] = json::parse(kConfig);
    const json resp = Response(Review(Webhook::kMutateDeployment, Request("CREATE", d).dump(), {}));
    CHECK(resp["allowed"] == true);
    CHECK_FALSE(resp.contains("patch"));
  }
  SECTION("DELETE: nothing") {
    json d = Deployment({{"wasd.io/scheduling", kConfig}});
    const json resp =
        Response(Review(Webhook::kMutateDeployment, Request("DELETE", nullptr, d).dump(), {}));
    CHECK_FALSE(resp.contains("patch"));
  }
}

// Q12: the PodGroup of ReplicaSet web-5d8f7c9b6 with uid "rs-uid" (the
// Workload-name encoding of the ReplicaSet's name and UID).
const std::string kPodGroup = wasd::workloadbuilder::PodGroupName("web-5d8f7c9b6", "rs-uid");

TEST_CASE("pod mutation ties a ReplicaSet pod to its PodGroup", "[unit]") {
  REQUIRE(kPodGroup == "web-5d8f7c9b6-" + wasd::workloadbuilder::SafeEncodeHash(
                                              wasd::workloadbuilder::Fnv1a32("(types.UID)rs-uid")));
  Options gate_on;  // native in gate mode (--pod-hold native=gate)
  gate_on.pod_hold.Set(wasd::workloadbuilder::Backend::kNative, wasd::admission::PodHold::kGate);
  Options gate_off = gate_on;
  gate_off.pod_scheduling_gate = false;

  SECTION("no gates yet: group and gate added, nothing else changes") {
    const json pod = Pod(ManagedLabels(), json::array({RsOwner()}));
    const Result r =
        Review(Webhook::kMutatePod, Request("CREATE", pod, nullptr, "Pod").dump(), gate_on);
    const json resp = Response(r);
    CHECK(r.summary.name == "web-5d8f7c9b6-");
    json want = pod;
    want["spec"]["schedulingGroup"] = {{"podGroupName", kPodGroup}};
    want["spec"]["schedulingGates"] = json::array({{{"name", "wasd.io/pod-group"}}});
    CHECK(Patched(resp, pod) == want);
  }
  SECTION("existing gates kept, ours appended once") {
    const json pod = Pod(ManagedLabels(), json::array({RsOwner()}),
                         {{"schedulingGates", json::array({{{"name", "other.io/x"}}})}});
    const json out =
        Patched(Response(Review(Webhook::kMutatePod, Request("CREATE", pod, nullptr, "Pod").dump(),
                                gate_on)),
                pod);
    CHECK(out["spec"]["schedulingGates"] ==
          json::array({{{"name", "other.io/x"}}, {{"name", "wasd.io/pod-group"}}}));
  }
  SECTION("our gate already present: not twice") {
    const json pod = Pod(ManagedLabels(), json::array({RsOwner()}),
                         {{"schedulingGates", json::array({{{"name", "wasd.io/pod-group"}}})}});
    const json out =
        Patched(Response(Review(Webhook::kMutatePod, Request("CREATE", pod, nullptr, "Pod").dump(),
                                gate_on)),
                pod);
    CHECK(out["spec"]["schedulingGates"].size() == 1);
    CHECK(out["spec"]["schedulingGroup"]["podGroupName"] == kPodGroup);
  }
  SECTION("--pod-scheduling-gate=false: group only") {
    const json pod = Pod(ManagedLabels(), json::array({RsOwner()}));
    const json out =
        Patched(Response(Review(Webhook::kMutatePod, Request("CREATE", pod, nullptr, "Pod").dump(),
                                gate_off)),
                pod);
    CHECK(out["spec"]["schedulingGroup"]["podGroupName"] == kPodGroup);
    CHECK_FALSE(out["spec"].contains("schedulingGates"));
  }
  SECTION("pods left alone") {
    json labels_no_hash = ManagedLabels();
    labels_no_hash.erase("pod-template-hash");
    json labels_unmanaged = ManagedLabels();
    labels_unmanaged["wasd.io/managed"] = "false";
    const json cases[] = {
        Pod(labels_no_hash, json::array({RsOwner()})),
        Pod(labels_unmanaged, json::array({RsOwner()})),
        Pod(ManagedLabels(), json::array()),
        Pod(ManagedLabels(), json::array({RsOwner("web-5d8f7c9b6", false)})),
        Pod(ManagedLabels(), json::array({RsOwner("job-x", true, "Job")})),
        // A controller reference without a uid names no incarnation.
        Pod(ManagedLabels(), json::array({json{{"apiVersion", "apps/v1"},
                                               {"kind", "ReplicaSet"},
                                               {"name", "web-5d8f7c9b6"},
                                               {"controller", true}}})),
        Pod(ManagedLabels(), json::array({RsOwner()}),
            {{"schedulingGroup", {{"podGroupName", "someone-else"}}}}),
    };
    for (const json& pod : cases) {
      INFO(pod.dump());
      const json resp = Response(
          Review(Webhook::kMutatePod, Request("CREATE", pod, nullptr, "Pod").dump(), gate_on));
      CHECK(resp["allowed"] == true);
      CHECK_FALSE(resp.contains("patch"));
    }
  }
  SECTION("UPDATE is never patched") {
    const json pod = Pod(ManagedLabels(), json::array({RsOwner()}));
    const json resp =
        Response(Review(Webhook::kMutatePod, Request("UPDATE", pod, pod, "Pod").dump(), gate_on));
    CHECK_FALSE(resp.contains("patch"));
  }
}

namespace {

json ScaleRequest(int old_replicas, int new_replicas) {
  auto scale = [](int n) {
    return json{{"apiVersion", "autoscaling/v1"},
                {"kind", "Scale"},
                {"metadata", {{"name", "web"}, {"namespace", "ml"}}},
                {"spec", {{"replicas", n}}},
                {"status", {{"replicas", 3}, {"selector", "app=web"}}}};
  };
  json req = Request("UPDATE", scale(new_replicas), scale(old_replicas));
  req["request"]["kind"] = {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}};
  req["request"]["subResource"] = "scale";
  req["request"]["requestSubResource"] = "scale";
  return req;
}

}  // namespace

TEST_CASE("scale: lookup requested, then H4 decides", "[unit]") {
  const json d = Deployment({{"wasd.io/scheduling", kConfig}});
  const Result first = Review(Webhook::kValidateDeployment, ScaleRequest(3, 2).dump(), Options{});
  REQUIRE(first.pending);
  CHECK(first.scale_namespace == "ml");
  CHECK(first.scale_name == "web");
  SECTION("below minCount: denied at spec.replicas") {
    const json resp = Response(FinishScale(*first.pending, &d));
    CHECK(resp["allowed"] == false);
    CHECK(resp["status"]["details"]["causes"][0]["field"] == "spec.replicas");
  }
  SECTION("Deployment not found: allowed") {
    CHECK(Response(FinishScale(*first.pending, nullptr))["allowed"] == true);
  }
  SECTION("to zero: allowed") {
    const Result z = Review(Webhook::kValidateDeployment, ScaleRequest(3, 0).dump(), Options{});
    REQUIRE(z.pending);
    CHECK(Response(FinishScale(*z.pending, &d))["allowed"] == true);
  }
  SECTION("at or above minCount: allowed") {
    const Result up = Review(Webhook::kValidateDeployment, ScaleRequest(3, 5).dump(), Options{});
    REQUIRE(up.pending);
    CHECK(Response(FinishScale(*up.pending, &d))["allowed"] == true);
  }
  SECTION("the denial names the minCount where the user wrote it") {
    const json resp = Response(FinishScale(*first.pending, &d));
    CHECK(resp["status"]["message"] ==
          "spec.replicas: Invalid value: 2: must be greater than or equal to "
          "metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount (3)");
    CHECK(resp["status"]["details"]["kind"] == "Scale");
  }
}

TEST_CASE("scale: an unchanged replica count is allowed without reading the Deployment", "[unit]") {
  // Ratcheting (rules::ScaleReplicasUnchanged): a Deployment stored below its
  // floor can still be written through /scale; no lookup is asked for.
  for (int n : {2, 0}) {
    INFO("replicas " << n);
    const Result same = Review(Webhook::kValidateDeployment, ScaleRequest(n, n).dump(), Options{});
    CHECK_FALSE(same.pending);
    CHECK(same.scale_name.empty());
    const json resp = Response(same);
    CHECK(resp["allowed"] == true);
    CHECK(same.summary.allowed);
    CHECK(same.summary.sub_resource == "scale");
  }
}

TEST_CASE("scale: a request whose object is not a Scale is a 400 without a lookup", "[unit]") {
  json req = ScaleRequest(3, 2);
  req["request"]["object"] = "not a scale";
  const Result r = Review(Webhook::kValidateDeployment, req.dump(), Options{});
  CHECK_FALSE(r.pending);
  CHECK(r.http_status == 400);
  CHECK(r.body == "request.object must be a Scale for a scale UPDATE\n");
}

TEST_CASE("scale: Unavailable answers 503 when the Deployment cannot be read", "[unit]") {
  const Result pending = Review(Webhook::kValidateDeployment, ScaleRequest(3, 2).dump(), Options{});
  REQUIRE(pending.pending);
  const Result r = wasd::admission::Unavailable(pending, "context deadline exceeded");
  CHECK(r.http_status == 503);
  CHECK(r.content_type == "text/plain; charset=utf-8");
  CHECK(r.body ==
        "cannot read Deployment ml/web for the scale review: context deadline exceeded\n");
  CHECK_FALSE(r.pending);
  CHECK_FALSE(r.summary.allowed);
  CHECK(r.summary.code == 503);
  CHECK(r.summary.error ==
        "cannot read Deployment ml/web for the scale review: context deadline exceeded");
  // The request's identity stays for the log line and the metrics.
  CHECK(r.summary.uid == wasd::testing::kReviewUid);
  CHECK(r.summary.operation == "UPDATE");
  CHECK(r.summary.sub_resource == "scale");
  CHECK(r.summary.name == "web");
}

TEST_CASE("denial details: kind and name of the object; causes can be turned off", "[unit]") {
  json d = Deployment({{"wasd.io/scheduling", R"({"schedulingPolicy":{"gang":{}}})"}});
  d["spec"]["strategy"] = {{"type", "RollingUpdate"}};
  const std::string body = Request("CREATE", d).dump();
  const json with = Response(Review(Webhook::kValidateDeployment, body, Options{}));
  CHECK(with["status"]["details"]["kind"] == "Deployment");
  CHECK(with["status"]["details"]["group"] == "apps");
  CHECK(with["status"]["details"]["name"] == "web");
  CHECK(with["status"]["details"]["causes"][0]["field"] == "spec.strategy.type");
  Options no_causes;
  no_causes.denial_causes = false;
  const json without = Response(Review(Webhook::kValidateDeployment, body, no_causes));
  CHECK_FALSE(without["status"].contains("details"));
  CHECK(without["status"]["code"] == 422);
  CHECK(without["status"]["message"] == with["status"]["message"]);
}
