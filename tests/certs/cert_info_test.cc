#include "certs/cert_info.h"

#include <catch2/catch.hpp>

#include "certs/issuer.h"

namespace wasd::certs {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

const SystemTime kIssued = std::chrono::system_clock::from_time_t(1'750'000'000);

// A leaf valid from kIssued - kBackdate to kIssued + days.
std::string LeafPem(int days) {
  CaOptions ca_options;
  ca_options.now = kIssued;
  CertKeyPem ca;
  REQUIRE(IssueCa(ca_options, &ca).ok());
  LeafOptions o;
  o.dns_names = {"leaf.example"};
  o.common_name = o.dns_names[0];
  o.days = days;
  o.now = kIssued;
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, o, &leaf).ok());
  return leaf.cert_pem;
}

}  // namespace

TEST_CASE("NeedsRenewal boundaries", "[unit][certs]") {
  const std::string pem = LeafPem(365);
  const SystemTime not_after = kIssued + hours(24 * 365);
  const seconds ninety_days = hours(24 * 90);

  SECTION("fresh certificate: no") { CHECK_FALSE(NeedsRenewal(pem, kIssued, ninety_days)); }
  SECTION("one second before the window: no") {
    CHECK_FALSE(NeedsRenewal(pem, not_after - ninety_days - seconds(1), ninety_days));
  }
  SECTION("exactly renew_before left: yes") {
    CHECK(NeedsRenewal(pem, not_after - ninety_days, ninety_days));
  }
  SECTION("inside the window: yes") {
    CHECK(NeedsRenewal(pem, not_after - hours(24), ninety_days));
  }
  SECTION("expired: yes") { CHECK(NeedsRenewal(pem, not_after + seconds(1), ninety_days)); }
  SECTION("renew_before zero renews at notAfter, not before") {
    CHECK_FALSE(NeedsRenewal(pem, not_after - seconds(1), seconds(0)));
    CHECK(NeedsRenewal(pem, not_after, seconds(0)));
  }
  SECTION("window longer than the lifetime: always") {
    CHECK(NeedsRenewal(pem, kIssued, hours(24 * 400)));
  }
  SECTION("not yet valid: yes") {
    CHECK(NeedsRenewal(pem, kIssued - kBackdate - seconds(1), ninety_days));
    CHECK_FALSE(NeedsRenewal(pem, kIssued - kBackdate, ninety_days));
  }
  SECTION("unparsable: yes") {
    CHECK(NeedsRenewal("", kIssued, ninety_days));
    CHECK(NeedsRenewal("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", kIssued,
                       ninety_days));
  }
}

TEST_CASE("CertificateValidity reads both dates", "[unit][certs]") {
  SystemTime nb;
  SystemTime na;
  REQUIRE(CertificateValidity(LeafPem(10), &nb, &na).ok());
  CHECK(na - nb == hours(24 * 10) + kBackdate);
  const Status bad = CertificateValidity("nope", &nb, &na);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("not a PEM certificate") == 0);
}

TEST_CASE("ParsePrivateKeyPem rejects non-keys", "[unit][certs]") {
  PkeyPtr key;
  CHECK_FALSE(ParsePrivateKeyPem("", &key).ok());
  CHECK_FALSE(ParsePrivateKeyPem(LeafPem(1), &key).ok());
  CHECK_FALSE(key);
}

}  // namespace wasd::certs
