#include "certs/ca_bundle.h"

#include "base/base64.h"

#include <catch2/catch.hpp>

namespace wasd::certs {
namespace {

using nlohmann::json;

const char kCa[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

json Config(json webhooks, const char* rv = "42") {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "MutatingWebhookConfiguration"},
          {"metadata", {{"name", "wasd"}, {"resourceVersion", rv}}},
          {"webhooks", std::move(webhooks)}};
}

json Hook(const std::string& name, json client_config) {
  return {{"name", name}, {"clientConfig", std::move(client_config)}};
}

json Svc() { return {{"service", {{"name", "wasd"}, {"namespace", "wasd-system"}}}}; }

}  // namespace

TEST_CASE("BuildCaBundlePatch sets caBundle on every webhook", "[unit][certs]") {
  json with_old = Svc();
  with_old["caBundle"] = "b2xk";
  const json config =
      Config({Hook("a.wasd.io", Svc()), Hook("b.wasd.io", with_old), json{{"name", "c.wasd.io"}}});
  json patch;
  REQUIRE(BuildCaBundlePatch(config, kCa, &patch).ok());
  const std::string b64 = base::Base64Encode(kCa);
  const json expected = json::array({
      {{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "42"}},
      {{"op", "add"}, {"path", "/webhooks/0/clientConfig/caBundle"}, {"value", b64}},
      {{"op", "replace"}, {"path", "/webhooks/1/clientConfig/caBundle"}, {"value", b64}},
      {{"op", "add"}, {"path", "/webhooks/2/clientConfig"}, {"value", {{"caBundle", b64}}}},
  });
  CHECK(patch == expected);
}

TEST_CASE("BuildCaBundlePatch skips webhooks that already carry the bundle", "[unit][certs]") {
  json current = Svc();
  current["caBundle"] = base::Base64Encode(kCa);
  json patch;

  SECTION("all equal: empty patch, not even the test op") {
    REQUIRE(BuildCaBundlePatch(Config({Hook("a", current), Hook("b", current)}), kCa, &patch).ok());
    CHECK(patch == json::array());
  }
  SECTION("only the stale one is patched") {
    REQUIRE(BuildCaBundlePatch(Config({Hook("a", current), Hook("b", Svc())}), kCa, &patch).ok());
    REQUIRE(patch.size() == 2);
    CHECK(patch[1]["path"] == "/webhooks/1/clientConfig/caBundle");
  }
  SECTION("a different CA is replaced") {
    REQUIRE(BuildCaBundlePatch(Config({Hook("a", current)}), "other CA", &patch).ok());
    REQUIRE(patch.size() == 2);
    CHECK(patch[1]["op"] == "replace");
    CHECK(patch[1]["value"] == base::Base64Encode("other CA"));
  }
}

TEST_CASE("BuildCaBundlePatch edge cases", "[unit][certs]") {
  json patch = {1};
  SECTION("no webhooks: nothing to do") {
    json config = Config(json::array());
    REQUIRE(BuildCaBundlePatch(config, kCa, &patch).ok());
    CHECK(patch == json::array());
    config.erase("webhooks");
    REQUIRE(BuildCaBundlePatch(config, kCa, &patch).ok());
    CHECK(patch == json::array());
  }
  SECTION("no resourceVersion: no test op") {
    REQUIRE(BuildCaBundlePatch(Config({Hook("a", Svc())}, ""), kCa, &patch).ok());
    REQUIRE(patch.size() == 1);
    CHECK(patch[0]["op"] == "add");
  }
  SECTION("malformed shapes fail with a reason") {
    Status st = BuildCaBundlePatch(json::array(), kCa, &patch);
    CHECK(st.message() == "webhook configuration is not a JSON object");
    st = BuildCaBundlePatch(Config(json::object()), kCa, &patch);
    CHECK(st.message() == "webhooks is not an array");
    st = BuildCaBundlePatch(Config({Hook("a", Svc()), 7}), kCa, &patch);
    CHECK(st.message() == "webhooks[1] is not an object");
  }
}

}  // namespace wasd::certs
