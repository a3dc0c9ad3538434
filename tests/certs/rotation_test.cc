#include "certs/rotation.h"

#include "base/base64.h"

#include <catch2/catch.hpp>

#include "certs/ca_bundle.h"
#include "tests/certs/fake_cert_api.h"

namespace wasd::certs {
namespace {

using nlohmann::json;
using std::chrono::hours;
using testing::FakeCertApi;

const SystemTime kNow = std::chrono::system_clock::from_time_t(1'750'000'000);
constexpr hours kDay{24};

RotationOptions Options() {
  RotationOptions o;
  o.service = "wasd";
  o.ns = "wasd-system";
  o.secret_name = "wasd-tls";
  o.webhook_configs = {"wasd"};
  return o;
}

json Hooks() {
  return {{"metadata", {{"name", "wasd"}}},
          {"webhooks", {{{"name", "a.wasd.io"}, {"clientConfig", json::object()}}}}};
}

std::string Injected(FakeCertApi& api) {
  const json& hook = (*api.Config(WebhookKind::kMutating, "wasd"))["webhooks"][0];
  base::Result<std::string> pem = base::Base64Decode(hook["clientConfig"].value("caBundle", ""));
  return pem.ok() ? *pem : std::string();
}

}  // namespace

TEST_CASE("RotateOnce creates the Secret and injects its CA", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  CHECK(report.decision.action == RotationAction::kCreate);
  CHECK(report.secret_written);
  const json* secret = api.Secret("wasd-system", "wasd-tls");
  REQUIRE(secret != nullptr);
  CHECK((*secret)["type"] == "kubernetes.io/tls");
  CHECK(IsManagedSecret(*secret));
  const SecretPems pems = ReadSecretPems(*secret);
  CHECK(VerifyChain(pems.leaf.cert_pem, pems.ca.cert_pem, kNow).ok());
  CHECK(CheckKeyMatchesCertificate(pems.leaf.cert_pem, pems.leaf.key_pem).ok());
  CHECK(Injected(api) == pems.ca.cert_pem);
  CHECK(report.leaf_not_after == kNow + 365 * kDay);
  CHECK_FALSE(report.leaf_serial.empty());
  REQUIRE(report.injected.size() == 1);
  CHECK(report.injected[0].patched == 1);
}

TEST_CASE("RotateOnce leaves a valid certificate alone", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  const json before = *api.Secret("wasd-system", "wasd-tls");
  const std::size_t patches = api.patches.size();

  REQUIRE(RotateOnce(api, Options(), kNow + 200 * kDay, &report).ok());
  CHECK(report.decision.action == RotationAction::kNone);
  CHECK_FALSE(report.secret_written);
  CHECK(*api.Secret("wasd-system", "wasd-tls") == before);
  CHECK(api.patches.size() == patches);  // the bundle was already current
}

TEST_CASE("RotateOnce renews the leaf inside renew-before, keeping the CA", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  const SecretPems first = ReadSecretPems(*api.Secret("wasd-system", "wasd-tls"));
  const std::string first_serial = report.leaf_serial;

  const SystemTime later = kNow + 300 * kDay;  // 65 days left < 90
  REQUIRE(RotateOnce(api, Options(), later, &report).ok());
  CHECK(report.decision.action == RotationAction::kRenewLeaf);
  CHECK(report.decision.reason == "tls.crt expires within renew-before");
  const SecretPems second = ReadSecretPems(*api.Secret("wasd-system", "wasd-tls"));
  CHECK(second.ca.cert_pem == first.ca.cert_pem);
  CHECK(second.leaf.cert_pem != first.leaf.cert_pem);
  CHECK(report.leaf_serial != first_serial);
  CHECK(report.leaf_not_after == later + 365 * kDay);
  CHECK(VerifyChain(second.leaf.cert_pem, second.ca.cert_pem, later).ok());
  CHECK(Injected(api) == first.ca.cert_pem);

  SECTION("--renew-before shorter than the remaining time: no renewal") {
    RotationOptions o = Options();
    o.renew_before = hours(24 * 30);
    REQUIRE(RotateOnce(api, o, kNow + 301 * kDay, &report).ok());
    CHECK(report.decision.action == RotationAction::kNone);
  }
}

TEST_CASE("RotateOnce never writes a Secret it does not manage", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  const json foreign = {{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"type", "kubernetes.io/tls"},
                        {"metadata",
                         {{"name", "wasd-tls"},
                          {"namespace", "wasd-system"},
                          {"annotations", {{"cert-manager.io/certificate-name", "wasd"}}}}},
                        {"data", {{"tls.crt", "AAAA"}}}};
  api.PutSecret(foreign);
  const json stored = *api.Secret("wasd-system", "wasd-tls");
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  CHECK(report.decision.action == RotationAction::kLeaveForeign);
  CHECK_FALSE(report.secret_written);
  CHECK(*api.Secret("wasd-system", "wasd-tls") == stored);
  CHECK(api.patches.empty());
  CHECK(api.calls == std::vector<std::string>{"GET secret wasd-system/wasd-tls"});

  SECTION("annotation with another value is still foreign") {
    json s = stored;
    s["metadata"]["annotations"][kManagedAnnotation] = "false";
    CHECK_FALSE(IsManagedSecret(s));
  }
}

TEST_CASE("RotateOnce replaces a broken or expiring CA", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  const SecretPems first = ReadSecretPems(*api.Secret("wasd-system", "wasd-tls"));

  SECTION("ca.key removed") {
    json* s = api.Secret("wasd-system", "wasd-tls");
    (*s)["data"].erase("ca.key");
    REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
    CHECK(report.decision.action == RotationAction::kRenewCaAndLeaf);
  }
  SECTION("CA within renew-before of its end") {
    REQUIRE(RotateOnce(api, Options(), kNow + (3650 - 80) * kDay, &report).ok());
    CHECK(report.decision.action == RotationAction::kRenewCaAndLeaf);
    CHECK(report.decision.reason == "CA expires within renew-before");
  }
  const SecretPems second = ReadSecretPems(*api.Secret("wasd-system", "wasd-tls"));
  CHECK(second.ca.cert_pem != first.ca.cert_pem);
  // M5: both CAs until the pods serve the new leaf (the old one still
  // parses in the "ca.key removed" case; the expiring one too).
  CHECK(Injected(api) == second.ca.cert_pem + first.ca.cert_pem);
  CHECK(report.previous_ca_in_bundle);
}

TEST_CASE("CA renewal is two-phase: old and new CA in the bundle, then the new one only",
          "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  const SecretPems first = ReadSecretPems(*api.Secret("wasd-system", "wasd-tls"));
  (*api.Secret("wasd-system", "wasd-tls"))["data"].erase("ca.key");
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  REQUIRE(report.decision.action == RotationAction::kRenewCaAndLeaf);
  const json& secret = *api.Secret("wasd-system", "wasd-tls");
  const SecretPems second = ReadSecretPems(secret);
  // The old leaf (what the pods serve until kubelet refreshes the volume)
  // and the new one both verify against the injected bundle.
  const std::string bundle = Injected(api);
  CHECK(bundle == second.ca.cert_pem + first.ca.cert_pem);
  CHECK(VerifyChain(first.leaf.cert_pem, first.ca.cert_pem, kNow).ok());
  CHECK(VerifyChain(second.leaf.cert_pem, second.ca.cert_pem, kNow).ok());
  CHECK(secret["metadata"]["annotations"][kPreviousCaUntilAnnotation] == "2025-06-15T17:06:40Z");
  CHECK(secret["data"].contains(kPreviousCaKey));

  SECTION("a pass inside the overlap keeps both") {
    REQUIRE(RotateOnce(api, Options(), kNow + std::chrono::hours(1), &report).ok());
    CHECK(report.decision.action == RotationAction::kNone);
    CHECK(Injected(api) == bundle);
    CHECK_FALSE(report.previous_ca_dropped);
  }
  SECTION("the first pass after the overlap drops the old CA from the bundle and the Secret") {
    REQUIRE(RotateOnce(api, Options(), kNow + kDefaultPreviousCaOverlap + std::chrono::seconds(1),
                       &report)
                .ok());
    CHECK(Injected(api) == second.ca.cert_pem);
    CHECK(report.previous_ca_dropped);
    const json& after = *api.Secret("wasd-system", "wasd-tls");
    CHECK_FALSE(after["data"].contains(kPreviousCaKey));
    CHECK_FALSE(after["metadata"]["annotations"].contains(kPreviousCaUntilAnnotation));
    CHECK(ReadSecretPems(after).ca.cert_pem == second.ca.cert_pem);
  }
}

TEST_CASE("RotateOnce renews when the wanted names change", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  RotationOptions o = Options();
  o.extra_sans = {"127.0.0.1"};
  REQUIRE(RotateOnce(api, o, kNow, &report).ok());
  CHECK(report.decision.action == RotationAction::kRenewLeaf);
  CHECK(report.decision.reason == "tls.crt lacks IP address 127.0.0.1");
}

TEST_CASE("RotateOnce retries a lost race and keeps the winner's Secret", "[unit][certs]") {
  FakeCertApi api;
  api.PutConfig(WebhookKind::kMutating, Hooks());
  // Another replica creates the Secret between our GET and our CREATE.
  FakeCertApi other;
  RotationOptions other_options = Options();
  other_options.webhook_configs.clear();
  RotationReport other_report;
  REQUIRE(RotateOnce(other, other_options, kNow, &other_report).ok());
  const json winner = *other.Secret("wasd-system", "wasd-tls");
  bool raced = false;
  api.before_write = [&] {
    if (!raced) {
      raced = true;
      api.PutSecret(winner);
    }
  };
  RotationReport report;
  REQUIRE(RotateOnce(api, Options(), kNow, &report).ok());
  CHECK(report.decision.action == RotationAction::kNone);
  CHECK_FALSE(report.secret_written);
  CHECK((*api.Secret("wasd-system", "wasd-tls"))["data"] == winner["data"]);
  CHECK(Injected(api) == ReadSecretPems(winner).ca.cert_pem);
}

TEST_CASE("RotateOnce reports API failures and bad options", "[unit][certs]") {
  FakeCertApi api;
  RotationReport report;
  api.down = true;
  Status st = RotateOnce(api, Options(), kNow, &report);
  CHECK(st.message() == "reading secret wasd-system/wasd-tls: unreachable: test");
  api.down = false;
  RotationOptions o = Options();
  o.secret_name.clear();
  CHECK(RotateOnce(api, o, kNow, &report).message() == "--secret is required");
  o = Options();
  o.webhook_configs = {"absent"};
  st = RotateOnce(api, o, kNow, &report);
  CHECK(st.message() ==
        "webhook configuration \"absent\" not found (neither mutating nor validating)");
  CHECK(report.secret_written);  // the Secret was still made first
}

TEST_CASE("BuildTlsSecret keeps foreign metadata and sets the four keys", "[unit][certs]") {
  const json base = {{"metadata",
                      {{"name", "s"},
                       {"namespace", "n"},
                       {"resourceVersion", "7"},
                       {"labels", {{"app", "wasd"}}}}},
                     {"data", {{"extra", "eA=="}}},
                     {"stringData", {{"tls.crt", "x"}}}};
  SecretPems pems;
  pems.ca = {"CA", "CAKEY"};
  pems.leaf = {"LEAF", "LEAFKEY"};
  const json s = BuildTlsSecret("n", "s", pems, &base);
  CHECK(s["type"] == "kubernetes.io/tls");
  CHECK(s["metadata"]["resourceVersion"] == "7");
  CHECK(s["metadata"]["labels"]["app"] == "wasd");
  CHECK(s["metadata"]["annotations"][kManagedAnnotation] == "true");
  CHECK(s["data"]["extra"] == "eA==");
  CHECK_FALSE(s.contains("stringData"));
  const SecretPems back = ReadSecretPems(s);
  CHECK(back.ca.cert_pem == "CA");
  CHECK(back.ca.key_pem == "CAKEY");
  CHECK(back.leaf.cert_pem == "LEAF");
  CHECK(back.leaf.key_pem == "LEAFKEY");
}

}  // namespace wasd::certs
