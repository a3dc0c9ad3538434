// The secure /metrics gate: the review objects wasd sends and reads, and the
// DelegatedAuthorizer's answers and cache, against a poster that plays the
// API server (the real one is exercised by tests/cluster/test_secure_metrics_real.py).
#include "metricsauth/authorizer.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "metricsauth/review.h"

namespace wasd::metricsauth {
namespace {

using nlohmann::json;

json TokenAnswer(bool authenticated, const std::string& user = "",
                 const std::vector<std::string>& groups = {}) {
  json status = {{"authenticated", authenticated}};
  if (authenticated) status["user"] = {{"username", user}, {"uid", "u-1"}, {"groups", groups}};
  if (!authenticated) status["error"] = "invalid bearer token";
  return {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"status", status}};
}

json AccessAnswerJson(bool allowed, const std::string& reason = "") {
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"status", {{"allowed", allowed}, {"reason", reason}}}};
}

// Plays the API server: tokens "reader" (allowed) and "nobody"
// (authenticated, not allowed); any other token is not authenticated.
struct FakeApi {
  std::vector<json> posted;
  bool fail = false;
  base::Result<json> operator()(const json& review) {
    posted.push_back(review);
    if (fail) return base::Status::Error("connection refused");
    if (review["kind"] == "TokenReview") {
      const std::string token = review["spec"]["token"];
      if (token == "reader")
        return TokenAnswer(true, "system:serviceaccount:mon:prometheus",
                           {"system:serviceaccounts"});
      if (token == "nobody") return TokenAnswer(true, "system:serviceaccount:default:nobody");
      return TokenAnswer(false);
    }
    const bool allowed = review["spec"]["user"] == "system:serviceaccount:mon:prometheus";
    return AccessAnswerJson(allowed, allowed ? "RBAC: allowed by ClusterRoleBinding" : "");
  }
};

struct Fixture {
  FakeApi api;
  runtime::Logger logger{runtime::LogLevel::kError};
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  DelegatedAuthorizer::Options options;
  DelegatedAuthorizer Make() {
    return DelegatedAuthorizer([this](const json& r) { return api(r); }, logger, options,
                               [this] { return now; });
  }
};

}  // namespace

TEST_CASE("the bearer token is read as RFC 6750 spells it", "[unit][metricsauth]") {
  CHECK(BearerToken("Bearer abc") == "abc");
  CHECK(BearerToken("bearer abc") == "abc");
  CHECK(BearerToken("BEARER  abc ") == "abc");
  CHECK(BearerToken("Basic dXNlcjpwYXNz").empty());
  CHECK(BearerToken("Bearer").empty());
  CHECK(BearerToken("Bearer ").empty());
  CHECK(BearerToken("Bearerabc").empty());
  CHECK(BearerToken("").empty());
}

TEST_CASE("review objects: what is sent and what is read back", "[unit][metricsauth]") {
  const json tr = TokenReviewRequest("t0k");
  CHECK(tr["apiVersion"] == "authentication.k8s.io/v1");
  CHECK(tr["kind"] == "TokenReview");
  CHECK(tr["spec"]["token"] == "t0k");

  UserInfo user{"alice", "u-7", {"g1", "g2"}, json{{"scopes", {"a"}}}};
  const json sar = SubjectAccessReviewRequest(user, "/metrics", "get");
  CHECK(sar["apiVersion"] == "authorization.k8s.io/v1");
  CHECK(sar["kind"] == "SubjectAccessReview");
  CHECK(sar["spec"]["user"] == "alice");
  CHECK(sar["spec"]["uid"] == "u-7");
  CHECK(sar["spec"]["groups"] == json({"g1", "g2"}));
  CHECK(sar["spec"]["extra"]["scopes"] == json({"a"}));
  CHECK(sar["spec"]["nonResourceAttributes"] == json({{"path", "/metrics"}, {"verb", "get"}}));
  CHECK_FALSE(sar["spec"].contains("resourceAttributes"));

  base::Result<TokenReviewAnswer> ok = ParseTokenReview(TokenAnswer(true, "bob", {"x"}));
  REQUIRE(ok.ok());
  CHECK(ok.value().authenticated);
  CHECK(ok.value().user.username == "bob");
  CHECK(ok.value().user.groups == std::vector<std::string>{"x"});
  base::Result<TokenReviewAnswer> no = ParseTokenReview(TokenAnswer(false));
  REQUIRE(no.ok());
  CHECK_FALSE(no.value().authenticated);
  CHECK(no.value().error == "invalid bearer token");

  CHECK_FALSE(ParseTokenReview(json{{"kind", "Status"}}).ok());
  CHECK_FALSE(ParseTokenReview(json::array()).ok());
  json bad_groups = TokenAnswer(true, "bob");
  bad_groups["status"]["user"]["groups"] = json{{"a", 1}};
  CHECK_FALSE(ParseTokenReview(bad_groups).ok());
  json no_user = TokenAnswer(true, "bob");
  no_user["status"].erase("user");
  CHECK_FALSE(ParseTokenReview(no_user).ok());

  CHECK(ParseSubjectAccessReview(AccessAnswerJson(true)).value().allowed);
  CHECK_FALSE(ParseSubjectAccessReview(AccessAnswerJson(false)).value().allowed);
  json denied = AccessAnswerJson(true);
  denied["status"]["denied"] = true;
  CHECK_FALSE(ParseSubjectAccessReview(denied).value().allowed);
  CHECK_FALSE(ParseSubjectAccessReview(TokenAnswer(true, "x")).ok());
}

TEST_CASE("the gate: 401 without a known token, 403 without RBAC, pass with it",
          "[unit][metricsauth]") {
  Fixture f;
  DelegatedAuthorizer gate = f.Make();

  std::optional<runtime::HttpResponse> r = gate.Check("/metrics", "");
  REQUIRE(r);
  CHECK(r->status == 401);
  CHECK(r->www_authenticate.find("Bearer") == 0);
  CHECK(f.api.posted.empty());  // nothing to ask about

  r = gate.Check("/metrics", "Bearer forged");
  REQUIRE(r);
  CHECK(r->status == 401);
  CHECK(r->body.find("invalid bearer token") != std::string::npos);
  CHECK(f.api.posted.size() == 1);  // no SubjectAccessReview for an unknown token

  r = gate.Check("/metrics", "Bearer nobody");
  REQUIRE(r);
  CHECK(r->status == 403);
  CHECK(r->body.find("system:serviceaccount:default:nobody") != std::string::npos);
  CHECK(r->body.find("nonResourceURLs") != std::string::npos);
  REQUIRE(f.api.posted.size() == 3);
  CHECK(f.api.posted[2]["spec"]["nonResourceAttributes"]["path"] == "/metrics");

  CHECK_FALSE(gate.Check("/metrics?name[]=x", "Bearer reader"));
  REQUIRE(f.api.posted.size() == 5);
  CHECK(f.api.posted[4]["spec"]["nonResourceAttributes"]["path"] == "/metrics");  // no query
  CHECK(gate.reviews_posted() == 5);
}

TEST_CASE("the gate's cache: allowed and denied answers kept for their TTLs, failures never",
          "[unit][metricsauth]") {
  Fixture f;
  f.options.allowed_ttl = std::chrono::seconds(60);
  f.options.denied_ttl = std::chrono::seconds(10);
  DelegatedAuthorizer gate = f.Make();

  CHECK_FALSE(gate.Check("/metrics", "Bearer reader"));
  CHECK(f.api.posted.size() == 2);
  f.now += std::chrono::seconds(59);
  CHECK_FALSE(gate.Check("/metrics", "Bearer reader"));
  CHECK(f.api.posted.size() == 2);  // from the cache
  f.now += std::chrono::seconds(2);
  CHECK_FALSE(gate.Check("/metrics", "Bearer reader"));
  CHECK(f.api.posted.size() == 4);  // expired: asked again

  REQUIRE(gate.Check("/metrics", "Bearer nobody")->status == 403);
  CHECK(f.api.posted.size() == 6);
  f.now += std::chrono::seconds(9);
  REQUIRE(gate.Check("/metrics", "Bearer nobody")->status == 403);
  CHECK(f.api.posted.size() == 6);
  f.now += std::chrono::seconds(2);
  REQUIRE(gate.Check("/metrics", "Bearer nobody")->status == 403);
  CHECK(f.api.posted.size() == 8);

  // Another path is another question.
  CHECK(gate.Check("/healthz", "Bearer nobody")->status == 403);
  CHECK(f.api.posted.size() == 10);

  // The API server unreachable: 503 saying so, and the next request asks again.
  f.api.fail = true;
  std::optional<runtime::HttpResponse> r = gate.Check("/metrics", "Bearer other");
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->body.find("connection refused") != std::string::npos);
  CHECK(gate.Check("/metrics", "Bearer other")->status == 503);
  CHECK(f.api.posted.size() == 12);
  f.api.fail = false;
  CHECK(gate.Check("/metrics", "Bearer other")->status == 401);
}

TEST_CASE("the gate's cache is bounded", "[unit][metricsauth]") {
  Fixture f;
  f.options.max_entries = 4;
  DelegatedAuthorizer gate = f.Make();
  for (int i = 0; i < 10; ++i) gate.Check("/metrics", "Bearer forged-" + std::to_string(i));
  CHECK(f.api.posted.size() == 10);
  // forged-9 went in after the last clear: still cached.
  gate.Check("/metrics", "Bearer forged-9");
  CHECK(f.api.posted.size() == 10);
  // forged-0 was dropped when the cache filled.
  gate.Check("/metrics", "Bearer forged-0");
  CHECK(f.api.posted.size() == 11);
}

}  // namespace wasd::metricsauth
