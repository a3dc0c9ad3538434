// ServingCert loading and ServingCertReloader: real PEM files in a temp dir,
// made with the issuer.
#include "certs/serving_cert.h"

#include <openssl/ssl.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "certs/issuer.h"

namespace wasd::certs {
namespace {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "wasd-serving-cert-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Writes via a temporary file and rename, as Secret volume updates do.
  void Put(const std::string& name, const std::string& content) const {
    const std::string tmp = File(name + ".tmp");
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << content;
    std::filesystem::rename(tmp, File(name));
  }

 private:
  std::string path_;
};

CertKeyPem Ca() {
  CaOptions o;
  o.now = std::chrono::system_clock::now();
  CertKeyPem ca;
  REQUIRE(IssueCa(o, &ca).ok());
  return ca;
}

CertKeyPem Leaf(const CertKeyPem& ca, int days) {
  LeafOptions o;
  o.common_name = "localhost";
  o.ip_addresses = {"127.0.0.1"};
  o.days = days;
  o.now = std::chrono::system_clock::now();
  CertKeyPem leaf;
  REQUIRE(IssueLeaf(ca, o, &leaf).ok());
  return leaf;
}

TEST_CASE("a good pair loads with the TLS policy applied", "[unit][certs]") {
  ScratchDir dir;
  const CertKeyPem ca = Ca();
  const CertKeyPem leaf = Leaf(ca, 30);
  dir.Put("tls.crt", leaf.cert_pem + ca.cert_pem);  // leaf plus chain
  dir.Put("tls.key", leaf.key_pem);
  auto loaded = LoadServingCert({dir.File("tls.crt"), dir.File("tls.key"), ""});
  REQUIRE(loaded.ok());
  const auto& cert = *loaded;
  SSL_CTX* ctx = cert->ssl_ctx();
  CHECK(SSL_CTX_get_min_proto_version(ctx) == TLS1_2_VERSION);
  CHECK((SSL_CTX_get_session_cache_mode(ctx) & SSL_SESS_CACHE_SERVER) != 0);
  CHECK((SSL_CTX_get_options(ctx) & SSL_OP_NO_TICKET) == 0);  // tickets on
  CHECK((SSL_CTX_get_options(ctx) & SSL_OP_NO_RENEGOTIATION) != 0);
  CHECK(SSL_CTX_get_verify_mode(ctx) == SSL_VERIFY_NONE);
  const auto days = (cert->not_after_unix() -
                     std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())) /
                    86400;
  CHECK((days == 29 || days == 30));
  CHECK(!cert->serial_hex().empty());
  CHECK(cert->subject() == "CN=localhost");
}

TEST_CASE("a client CA turns on required client certificates", "[unit][certs]") {
  ScratchDir dir;
  const CertKeyPem ca = Ca();
  const CertKeyPem leaf = Leaf(ca, 30);
  dir.Put("tls.crt", leaf.cert_pem);
  dir.Put("tls.key", leaf.key_pem);
  dir.Put("client-ca.crt", Ca().cert_pem);
  auto cert =
      LoadServingCert({dir.File("tls.crt"), dir.File("tls.key"), dir.File("client-ca.crt")});
  REQUIRE(cert.ok());
  CHECK(SSL_CTX_get_verify_mode((*cert)->ssl_ctx()) ==
        (SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT));

  dir.Put("bad-ca.crt", "no certificates here\n");
  auto bad = LoadServingCert({dir.File("tls.crt"), dir.File("tls.key"), dir.File("bad-ca.crt")});
  CHECK_FALSE(bad.ok());
  CHECK(bad.status().message().find("bad-ca.crt") != std::string::npos);
}

TEST_CASE("unusable pairs are refused with the reason", "[unit][certs]") {
  ScratchDir dir;
  const CertKeyPem ca = Ca();
  const CertKeyPem a = Leaf(ca, 30);
  const CertKeyPem b = Leaf(ca, 30);
  auto error_of = [](const ServingCertFiles& files) {
    auto cert = LoadServingCert(files);
    CHECK_FALSE(cert.ok());
    return cert.status().message();
  };

  SECTION("key of another certificate") {
    dir.Put("tls.crt", a.cert_pem);
    dir.Put("tls.key", b.key_pem);
    CHECK(error_of({dir.File("tls.crt"), dir.File("tls.key"), ""}).find("does not match") !=
          std::string::npos);
  }
  SECTION("missing file") {
    CHECK(error_of({dir.File("nope.crt"), dir.File("tls.key"), ""}).find("nope.crt") !=
          std::string::npos);
  }
  SECTION("empty file") {
    dir.Put("tls.crt", "");
    dir.Put("tls.key", a.key_pem);
    CHECK(error_of({dir.File("tls.crt"), dir.File("tls.key"), ""}).find("is empty") !=
          std::string::npos);
  }
  SECTION("garbage") {
    dir.Put("tls.crt", "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n");
    dir.Put("tls.key", a.key_pem);
    CHECK(error_of({dir.File("tls.crt"), dir.File("tls.key"), ""}).find("tls.crt") !=
          std::string::npos);
  }
}

TEST_CASE("the reloader swaps good pairs and keeps the old one on bad", "[unit][certs]") {
  ScratchDir dir;
  const CertKeyPem ca = Ca();
  const CertKeyPem first = Leaf(ca, 10);
  const CertKeyPem second = Leaf(ca, 20);
  dir.Put("tls.crt", first.cert_pem);
  dir.Put("tls.key", first.key_pem);
  ServingCertReloader reloader({dir.File("tls.crt"), dir.File("tls.key"), ""});
  CHECK_FALSE(reloader.Current());
  REQUIRE(reloader.LoadInitial().ok());
  base::Status error;
  const auto original = reloader.Current();
  REQUIRE(original);
  CHECK(reloader.Poll(&error) == ServingCertReloader::PollResult::kUnchanged);

  dir.Put("tls.crt", second.cert_pem);
  dir.Put("tls.key", second.key_pem);
  CHECK(reloader.Poll(&error) == ServingCertReloader::PollResult::kReloaded);
  const auto renewed = reloader.Current();
  CHECK(renewed != original);
  CHECK(renewed->serial_hex() != original->serial_hex());
  CHECK(renewed->not_after_unix() > original->not_after_unix());
  // The previous pair stays valid for whoever still holds it.
  CHECK(original->ssl_ctx() != nullptr);

  dir.Put("tls.crt", first.cert_pem);  // key is still `second`'s: mismatch
  CHECK(reloader.Poll(&error) == ServingCertReloader::PollResult::kRejected);
  CHECK(error.message().find("does not match") != std::string::npos);
  CHECK(reloader.Current() == renewed);
  // The same broken files are not retried on every poll.
  CHECK(reloader.Poll(&error) == ServingCertReloader::PollResult::kUnchanged);

  dir.Put("tls.key", first.key_pem);  // completes the pair
  CHECK(reloader.Poll(&error) == ServingCertReloader::PollResult::kReloaded);
  CHECK(reloader.Current()->serial_hex() == original->serial_hex());
}

TEST_CASE("stamps notice replaced and vanished files", "[unit][certs]") {
  ScratchDir dir;
  dir.Put("a", "one");
  const ServingCertFiles files{dir.File("a"), dir.File("b"), ""};
  const FilesStamp s1 = StampFiles(files);
  CHECK(s1.files[0].exists);
  CHECK_FALSE(s1.files[1].exists);
  CHECK_FALSE(s1.files[2].exists);
  CHECK(StampFiles(files) == s1);
  dir.Put("a", "two");
  CHECK_FALSE(StampFiles(files) == s1);
}

}  // namespace
}  // namespace wasd::certs
