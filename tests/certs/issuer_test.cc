#include "certs/issuer.h"

#include <catch2/catch.hpp>

#include <set>

#include "certs/cert_info.h"
#include "tests/certs/test_helpers.h"

namespace wasd::certs {
namespace {

using testing::MustParse;
using testing::ReadSans;
using testing::SerialHex;

const SystemTime kNow = std::chrono::system_clock::from_time_t(1'750'000'000);  // June 2025

CertKeyPem MakeCa(KeyType type = KeyType::kEcdsaP256, int days = 3650) {
  CaOptions o;
  o.key_type = type;
  o.days = days;
  o.now = kNow;
  CertKeyPem ca;
  const Status st = IssueCa(o, &ca);
  REQUIRE(st.ok());
  return ca;
}

LeafOptions Leaf(KeyType type = KeyType::kEcdsaP256, int days = 365) {
  LeafOptions o;
  o.common_name = "wasd.wasd-system.svc";
  o.dns_names = ServiceDnsNames("wasd", "wasd-system");
  o.ip_addresses = {"127.0.0.1", "::1"};
  o.key_type = type;
  o.days = days;
  o.now = kNow;
  return o;
}

bool HasKeyUsage(X509* cert, uint32_t bit) { return (X509_get_key_usage(cert) & bit) != 0; }

int KeyBaseId(X509* cert) { return EVP_PKEY_get_base_id(X509_get0_pubkey(cert)); }

}  // namespace

TEST_CASE("ServiceDnsNames gives the four in-cluster forms", "[unit][certs]") {
  CHECK(ServiceDnsNames("wasd", "ns") ==
        std::vector<std::string>{"wasd", "wasd.ns", "wasd.ns.svc", "wasd.ns.svc.cluster.local"});
}

TEST_CASE("ParseKeyType accepts ecdsa and rsa only", "[unit][certs]") {
  KeyType t = KeyType::kRsa2048;
  CHECK(ParseKeyType("ecdsa", &t));
  CHECK(t == KeyType::kEcdsaP256);
  CHECK(ParseKeyType("rsa", &t));
  CHECK(t == KeyType::kRsa2048);
  CHECK_FALSE(ParseKeyType("ed25519", &t));
  CHECK_FALSE(ParseKeyType("", &t));
}

TEST_CASE("SplitSans sorts DNS names from IPs and rejects junk", "[unit][certs]") {
  std::vector<std::string> dns;
  std::vector<std::string> ips;
  REQUIRE(SplitSans({"localhost", "127.0.0.1", "::1", "*.example.com"}, &dns, &ips).ok());
  CHECK(dns == std::vector<std::string>{"localhost", "*.example.com"});
  CHECK(ips == std::vector<std::string>{"127.0.0.1", "::1"});
  const Status bad = SplitSans({"a,b"}, &dns, &ips);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message() == "not a DNS name or IP address: \"a,b\"");
  CHECK_FALSE(SplitSans({"-bad.example"}, &dns, &ips).ok());
  CHECK_FALSE(SplitSans({std::string(64, 'a') + ".com"}, &dns, &ips).ok());
  CHECK_FALSE(SplitSans({""}, &dns, &ips).ok());
}

TEST_CASE("IssueCa makes a self-signed CA with the CA extensions", "[unit][certs]") {
  const CertKeyPem ca = MakeCa();
  X509Ptr cert = MustParse(ca.cert_pem);
  REQUIRE(cert);
  CHECK(IsCa(cert.get()));
  CHECK(X509_check_issued(cert.get(), cert.get()) == X509_V_OK);
  CHECK(HasKeyUsage(cert.get(), KU_KEY_CERT_SIGN));
  CHECK(HasKeyUsage(cert.get(), KU_CRL_SIGN));
  CHECK_FALSE(HasKeyUsage(cert.get(), KU_DIGITAL_SIGNATURE));
  // basicConstraints is critical.
  const int idx = X509_get_ext_by_NID(cert.get(), NID_basic_constraints, -1);
  REQUIRE(idx >= 0);
  CHECK(X509_EXTENSION_get_critical(X509_get_ext(cert.get(), idx)) == 1);
  CHECK(X509_get0_subject_key_id(cert.get()) != nullptr);
  CHECK(X509_get0_authority_key_id(cert.get()) != nullptr);
  CHECK(CheckKeyMatchesCertificate(ca.cert_pem, ca.key_pem).ok());
  CHECK(KeyBaseId(cert.get()) == EVP_PKEY_EC);
}

TEST_CASE("IssueCa validity follows days, backdated for clock skew", "[unit][certs]") {
  const CertKeyPem ca = MakeCa(KeyType::kEcdsaP256, 3650);
  SystemTime nb;
  SystemTime na;
  REQUIRE(CertificateValidity(ca.cert_pem, &nb, &na).ok());
  CHECK(nb == kNow - kBackdate);
  CHECK(na == kNow + std::chrono::hours(24 * 3650));
}

TEST_CASE("IssueLeaf signs a serving certificate that verifies against the CA", "[unit][certs]") {
  const CertKeyPem ca = MakeCa();
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, Leaf(), &leaf).ok());
  X509Ptr cert = MustParse(leaf.cert_pem);
  REQUIRE(cert);

  CHECK(VerifyChain(leaf.cert_pem, ca.cert_pem, kNow).ok());
  CHECK(CheckKeyMatchesCertificate(leaf.cert_pem, leaf.key_pem).ok());
  CHECK_FALSE(IsCa(cert.get()));
  CHECK(X509_check_purpose(cert.get(), X509_PURPOSE_SSL_SERVER, 0) == 1);
  CHECK((X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER) != 0);
  CHECK((X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT) == 0);
  CHECK(HasKeyUsage(cert.get(), KU_DIGITAL_SIGNATURE));
  CHECK_FALSE(HasKeyUsage(cert.get(), KU_KEY_ENCIPHERMENT));  // ECDSA cannot encipher
  CHECK_FALSE(HasKeyUsage(cert.get(), KU_KEY_CERT_SIGN));
  CHECK(KeyBaseId(cert.get()) == EVP_PKEY_EC);

  const testing::Sans sans = ReadSans(cert.get());
  CHECK(sans.dns == std::set<std::string>{"wasd", "wasd.wasd-system", "wasd.wasd-system.svc",
                                          "wasd.wasd-system.svc.cluster.local"});
  CHECK(sans.ips == std::set<std::string>{"127.0.0.1", "::1"});
  CHECK(X509_check_host(cert.get(), "wasd.wasd-system.svc", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(cert.get(), "other.wasd-system.svc", 0, 0, nullptr) == 0);
  CHECK(X509_check_ip_asc(cert.get(), "127.0.0.1", 0) == 1);

  // The AKI names the CA's SKI.
  X509Ptr ca_cert = MustParse(ca.cert_pem);
  const ASN1_OCTET_STRING* aki = X509_get0_authority_key_id(cert.get());
  const ASN1_OCTET_STRING* ski = X509_get0_subject_key_id(ca_cert.get());
  REQUIRE(aki != nullptr);
  REQUIRE(ski != nullptr);
  CHECK(ASN1_OCTET_STRING_cmp(aki, ski) == 0);
  CHECK(X509_get0_subject_key_id(cert.get()) != nullptr);
}

TEST_CASE("IssueLeaf with RSA keys adds keyEncipherment", "[unit][certs]") {
  const CertKeyPem ca = MakeCa(KeyType::kRsa2048);
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, Leaf(KeyType::kRsa2048), &leaf).ok());
  X509Ptr cert = MustParse(leaf.cert_pem);
  REQUIRE(cert);
  CHECK(KeyBaseId(cert.get()) == EVP_PKEY_RSA);
  CHECK(EVP_PKEY_get_bits(X509_get0_pubkey(cert.get())) == 2048);
  CHECK(HasKeyUsage(cert.get(), KU_DIGITAL_SIGNATURE));
  CHECK(HasKeyUsage(cert.get(), KU_KEY_ENCIPHERMENT));
  CHECK(VerifyChain(leaf.cert_pem, ca.cert_pem, kNow).ok());
}

TEST_CASE("IssueLeaf validity follows days and is capped by the CA", "[unit][certs]") {
  const CertKeyPem ca = MakeCa(KeyType::kEcdsaP256, 30);
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, Leaf(KeyType::kEcdsaP256, 7), &leaf).ok());
  SystemTime nb;
  SystemTime na;
  REQUIRE(CertificateValidity(leaf.cert_pem, &nb, &na).ok());
  CHECK(nb == kNow - kBackdate);
  CHECK(na == kNow + std::chrono::hours(24 * 7));

  REQUIRE(IssueLeaf(ca, Leaf(KeyType::kEcdsaP256, 365), &leaf).ok());
  REQUIRE(CertificateValidity(leaf.cert_pem, &nb, &na).ok());
  CHECK(na == kNow + std::chrono::hours(24 * 30));  // the CA's notAfter
  CHECK(VerifyChain(leaf.cert_pem, ca.cert_pem, kNow + std::chrono::hours(24 * 29)).ok());
  CHECK_FALSE(VerifyChain(leaf.cert_pem, ca.cert_pem, kNow + std::chrono::hours(24 * 31)).ok());
}

TEST_CASE("Serial numbers are random, positive and 128-bit sized", "[unit][certs]") {
  const CertKeyPem ca = MakeCa();
  std::set<std::string> serials;
  for (int i = 0; i < 20; ++i) {
    CertKeyPem leaf;
    REQUIRE(IssueLeaf(ca, Leaf(), &leaf).ok());
    X509Ptr cert = MustParse(leaf.cert_pem);
    const ASN1_INTEGER* serial = X509_get0_serialNumber(cert.get());
    CHECK(ASN1_STRING_type(serial) == V_ASN1_INTEGER);  // not V_ASN1_NEG_INTEGER
    BignumPtr bn(ASN1_INTEGER_to_BN(serial, nullptr));
    CHECK(BN_num_bits(bn.get()) <= 127);
    CHECK(BN_num_bits(bn.get()) > 64);  // fails with probability 2^-63
    serials.insert(testing::SerialHex(cert.get()));
  }
  CHECK(serials.size() == 20);
}

TEST_CASE("IssueLeaf refuses a wrong CA, a non-CA, no SANs and bad days", "[unit][certs]") {
  const CertKeyPem ca = MakeCa();
  const CertKeyPem other = MakeCa();
  CertKeyPem leaf;

  CertKeyPem mismatched{ca.cert_pem, other.key_pem};
  Status st = IssueLeaf(mismatched, Leaf(), &leaf);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("the CA key does not match the CA certificate") == 0);

  CertKeyPem serving;
  REQUIRE(IssueLeaf(ca, Leaf(), &serving).ok());
  st = IssueLeaf(serving, Leaf(), &leaf);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() == "the CA certificate is not a CA (CA:TRUE)");

  LeafOptions no_names = Leaf();
  no_names.dns_names.clear();
  no_names.ip_addresses.clear();
  CHECK_FALSE(IssueLeaf(ca, no_names, &leaf).ok());

  CHECK_FALSE(IssueLeaf(ca, Leaf(KeyType::kEcdsaP256, 0), &leaf).ok());
  CHECK_FALSE(IssueLeaf(ca, Leaf(KeyType::kEcdsaP256, kMaxDays + 1), &leaf).ok());
  CHECK_FALSE(IssueLeaf(CertKeyPem{"garbage", ca.key_pem}, Leaf(), &leaf).ok());
}

TEST_CASE("A leaf does not verify against a different CA", "[unit][certs]") {
  const CertKeyPem ca = MakeCa();
  const CertKeyPem other = MakeCa();
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, Leaf(), &leaf).ok());
  const Status st = VerifyChain(leaf.cert_pem, other.cert_pem, kNow);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("certificate does not verify against the CA") == 0);
}

TEST_CASE("Long service names get a truncated CN but full SANs", "[unit][certs]") {
  const CertKeyPem ca = MakeCa();
  LeafOptions o = Leaf();
  const std::string svc(60, 's');
  o.dns_names = ServiceDnsNames(svc, "ns");
  o.common_name = o.dns_names[2];
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, o, &leaf).ok());
  X509Ptr cert = MustParse(leaf.cert_pem);
  CHECK(ReadSans(cert.get()).dns.count(svc + ".ns.svc.cluster.local") == 1);
}

}  // namespace wasd::certs
