#include "certs/injector.h"

#include "base/base64.h"

#include <catch2/catch.hpp>

#include "certs/ca_bundle.h"
#include "tests/certs/fake_cert_api.h"

namespace wasd::certs {
namespace {

using nlohmann::json;
using testing::FakeCertApi;

const char kCa[] = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";

json WebhookConfig(const std::string& name, int hooks) {
  json webhooks = json::array();
  for (int i = 0; i < hooks; ++i) {
    webhooks.push_back({{"name", "h" + std::to_string(i) + ".wasd.io"},
                        {"clientConfig", {{"service", {{"name", "wasd"}, {"namespace", "ns"}}}}}});
  }
  return {{"metadata", {{"name", name}}}, {"webhooks", webhooks}};
}

std::vector<std::string> Bundles(const json& config) {
  std::vector<std::string> out;
  for (const auto& w : config["webhooks"]) out.push_back(w["clientConfig"].value("caBundle", ""));
  return out;
}

}  // namespace

TEST_CASE("InjectCaBundle patches mutating and validating configs by name", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, WebhookConfig("wasd", 2));
  api.PutConfig(WebhookKind::kValidating, WebhookConfig("wasd", 1));
  api.PutConfig(WebhookKind::kValidating, WebhookConfig("only-validating", 3));

  std::vector<InjectOutcome> outcomes;
  REQUIRE(InjectCaBundle(api, {"wasd", "only-validating"}, kCa, &outcomes).ok());
  const std::string b64 = base::Base64Encode(kCa);
  CHECK(Bundles(*api.Config(WebhookKind::kMutating, "wasd")) == std::vector<std::string>{b64, b64});
  CHECK(Bundles(*api.Config(WebhookKind::kValidating, "wasd")) == std::vector<std::string>{b64});
  CHECK(Bundles(*api.Config(WebhookKind::kValidating, "only-validating")) ==
        std::vector<std::string>{b64, b64, b64});
  REQUIRE(outcomes.size() == 3);
  CHECK(outcomes[0].kind == WebhookKind::kMutating);
  CHECK(outcomes[0].patched == 2);
  CHECK(outcomes[2].name == "only-validating");
  CHECK(outcomes[2].webhooks == 3);
  CHECK(outcomes[2].patched == 3);
  // The service reference is untouched.
  CHECK((*api.Config(WebhookKind::kMutating,
                     "wasd"))["webhooks"][0]["clientConfig"]["service"]["name"] == "wasd");
}

TEST_CASE("InjectCaBundle sends nothing when the bundle is already current", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, WebhookConfig("wasd", 2));
  std::vector<InjectOutcome> outcomes;
  REQUIRE(InjectCaBundle(api, {"wasd"}, kCa, &outcomes).ok());
  CHECK(api.patches.size() == 1);
  outcomes.clear();
  REQUIRE(InjectCaBundle(api, {"wasd"}, kCa, &outcomes).ok());
  CHECK(api.patches.size() == 1);  // no second PATCH
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].patched == 0);
  CHECK(outcomes[0].attempts == 0);
}

TEST_CASE("InjectCaBundle re-reads and retries after a concurrent edit", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, WebhookConfig("wasd", 1));
  int races = 1;
  api.before_write = [&] {
    if (races-- > 0) {
      // Someone adds a webhook between our GET and our PATCH.
      json* c = api.Config(WebhookKind::kMutating, "wasd");
      (*c)["webhooks"].push_back(WebhookConfig("x", 1)["webhooks"][0]);
      api.Touch(c);
    }
  };
  std::vector<InjectOutcome> outcomes;
  REQUIRE(InjectCaBundle(api, {"wasd"}, kCa, &outcomes).ok());
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].attempts == 2);
  CHECK(outcomes[0].patched == 2);  // the new webhook got the bundle as well
  const std::string b64 = base::Base64Encode(kCa);
  CHECK(Bundles(*api.Config(WebhookKind::kMutating, "wasd")) == std::vector<std::string>{b64, b64});
}

TEST_CASE("InjectCaBundle gives up after kMaxPatchAttempts conflicts", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, WebhookConfig("wasd", 1));
  api.before_write = [&] { api.Touch(api.Config(WebhookKind::kMutating, "wasd")); };
  std::vector<InjectOutcome> outcomes;
  const Status st = InjectCaBundle(api, {"wasd"}, kCa, &outcomes);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() ==
        "mutatingwebhookconfigurations/wasd kept changing; gave up after 5 attempts");
  CHECK(api.patches.size() == kMaxPatchAttempts);
}

TEST_CASE("InjectCaBundle errors name the configuration", "[unit][certs]") {
  FakeCertApi api;
  std::vector<InjectOutcome> outcomes;
  Status st = InjectCaBundle(api, {"missing"}, kCa, &outcomes);
  CHECK(st.message() ==
        "webhook configuration \"missing\" not found (neither mutating nor validating)");
  api.down = true;
  st = InjectCaBundle(api, {"wasd"}, kCa, &outcomes);
  CHECK(st.message() == "reading mutatingwebhookconfigurations/wasd: unreachable: test");
}

TEST_CASE("InjectCaBundle skips a missing configuration only when asked", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, WebhookConfig("wasd", 2));
  api.PutConfig(WebhookKind::kValidating, WebhookConfig("wasd", 1));
  std::vector<InjectOutcome> outcomes;
  REQUIRE(InjectCaBundle(api, {"missing", "wasd"}, kCa, &outcomes, /*skip_missing=*/true).ok());
  REQUIRE(outcomes.size() == 3);  // missing, then wasd as mutating and validating
  CHECK(outcomes[0].name == "missing");
  CHECK(outcomes[0].missing);
  CHECK(outcomes[0].attempts == 0);
  CHECK_FALSE(outcomes[1].missing);
  CHECK(outcomes[1].patched > 0);
  outcomes.clear();
  CHECK_FALSE(InjectCaBundle(api, {"missing"}, kCa, &outcomes).ok());
  CHECK(outcomes.empty());
}

}  // namespace wasd::certs
