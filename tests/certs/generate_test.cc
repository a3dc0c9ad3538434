#include "certs/generate.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "certs/cert_info.h"
#include "runtime/file_util.h"
#include "tests/certs/test_helpers.h"

namespace wasd::certs {
namespace {

using testing::TempDir;

const SystemTime kNow = std::chrono::system_clock::from_time_t(1'750'000'000);

GenerateOptions Options(const TempDir& dir) {
  GenerateOptions o;
  o.service = "wasd";
  o.ns = "wasd-system";
  o.out_dir = dir.path() + "/out";
  o.now = kNow;
  return o;
}

std::string Read(const std::string& path) {
  base::Result<std::string> data = runtime::ReadSmallFile(path, 1 << 20);
  REQUIRE(data.ok());
  return *data;
}

void Write(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

mode_t Mode(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

}  // namespace

TEST_CASE("GenerateToDirectory writes a verifying CA and serving pair", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  o.extra_sans = {"localhost", "127.0.0.1"};
  GenerateResult r;
  const Status st = GenerateToDirectory(o, &r);
  REQUIRE(st.ok());
  CHECK(r.ca_created);
  const std::string dir = o.out_dir;
  const std::string ca = Read(dir + "/ca.crt");
  const std::string leaf = Read(dir + "/tls.crt");
  CHECK(VerifyChain(leaf, ca, kNow).ok());
  CHECK(CheckKeyMatchesCertificate(leaf, Read(dir + "/tls.key")).ok());
  CHECK(CheckKeyMatchesCertificate(ca, Read(dir + "/ca.key")).ok());
  CHECK(Mode(dir + "/tls.key") == 0600);
  CHECK(Mode(dir + "/ca.key") == 0600);
  CHECK(Mode(dir + "/tls.crt") == 0644);

  X509Ptr cert = testing::MustParse(leaf);
  const testing::Sans sans = testing::ReadSans(cert.get());
  CHECK(sans.dns == std::set<std::string>{"wasd", "wasd.wasd-system", "wasd.wasd-system.svc",
                                          "wasd.wasd-system.svc.cluster.local", "localhost"});
  CHECK(sans.ips == std::set<std::string>{"127.0.0.1"});

  SystemTime nb;
  SystemTime na;
  REQUIRE(CertificateValidity(leaf, &nb, &na).ok());
  CHECK(na == kNow + std::chrono::hours(24 * 365));
  REQUIRE(CertificateValidity(ca, &nb, &na).ok());
  CHECK(na == kNow + std::chrono::hours(24 * 3650));
  // No temporary files are left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
    ++entries;
  }
  CHECK(entries == 5);  // four PEM files and the ownership record
}

TEST_CASE("GenerateToDirectory honours --days, --ca-days and --key-type", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  o.leaf_days = 30;
  o.ca_days = 100;
  o.key_type = KeyType::kRsa2048;
  GenerateResult r;
  REQUIRE(GenerateToDirectory(o, &r).ok());
  SystemTime nb;
  SystemTime na;
  REQUIRE(CertificateValidity(Read(o.out_dir + "/tls.crt"), &nb, &na).ok());
  CHECK(na == kNow + std::chrono::hours(24 * 30));
  REQUIRE(CertificateValidity(Read(o.out_dir + "/ca.crt"), &nb, &na).ok());
  CHECK(na == kNow + std::chrono::hours(24 * 100));
  X509Ptr cert = testing::MustParse(Read(o.out_dir + "/tls.crt"));
  CHECK(EVP_PKEY_get_base_id(X509_get0_pubkey(cert.get())) == EVP_PKEY_RSA);
}

TEST_CASE("A second run reuses the CA and signs a new leaf", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  GenerateResult r;
  REQUIRE(GenerateToDirectory(o, &r).ok());
  const std::string ca1 = Read(o.out_dir + "/ca.crt");
  const std::string leaf1 = Read(o.out_dir + "/tls.crt");

  o.now = kNow + std::chrono::hours(24);
  REQUIRE(GenerateToDirectory(o, &r).ok());
  CHECK_FALSE(r.ca_created);
  CHECK(Read(o.out_dir + "/ca.crt") == ca1);
  const std::string leaf2 = Read(o.out_dir + "/tls.crt");
  CHECK(leaf2 != leaf1);
  CHECK(VerifyChain(leaf2, ca1, o.now).ok());
}

TEST_CASE("A user-supplied CA is reused but never rewritten", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  CaOptions ca_options;
  ca_options.now = kNow;
  ca_options.common_name = "users-own-ca";
  CertKeyPem user_ca;
  REQUIRE(IssueCa(ca_options, &user_ca).ok());
  std::filesystem::create_directories(o.out_dir);
  Write(o.out_dir + "/ca.crt", user_ca.cert_pem);
  Write(o.out_dir + "/ca.key", user_ca.key_pem);

  GenerateResult r;
  REQUIRE(GenerateToDirectory(o, &r).ok());
  CHECK_FALSE(r.ca_created);
  CHECK(Read(o.out_dir + "/ca.crt") == user_ca.cert_pem);
  CHECK(Read(o.out_dir + "/ca.key") == user_ca.key_pem);
  CHECK(VerifyChain(Read(o.out_dir + "/tls.crt"), user_ca.cert_pem, kNow).ok());
}

TEST_CASE("Files not written by generate are not overwritten without force", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  std::filesystem::create_directories(o.out_dir);
  Write(o.out_dir + "/tls.crt", "user certificate\n");

  GenerateResult r;
  Status st = GenerateToDirectory(o, &r);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() == o.out_dir +
                            "/tls.crt exists and was not written by wasd certs generate; "
                            "refusing to overwrite it (pass --force to replace it)");
  CHECK(Read(o.out_dir + "/tls.crt") == "user certificate\n");
  CHECK_FALSE(runtime::PathExists(o.out_dir + "/ca.crt"));  // nothing written

  SECTION("a file we wrote but someone edited counts as theirs") {
    std::filesystem::remove(o.out_dir + "/tls.crt");
    REQUIRE(GenerateToDirectory(o, &r).ok());
    Write(o.out_dir + "/tls.key", "edited\n");
    st = GenerateToDirectory(o, &r);
    REQUIRE_FALSE(st.ok());
    CHECK(st.message().find("/tls.key exists and was not written") != std::string::npos);
    CHECK(Read(o.out_dir + "/tls.key") == "edited\n");
  }
  SECTION("--force replaces it") {
    o.force = true;
    REQUIRE(GenerateToDirectory(o, &r).ok());
    CHECK(VerifyChain(Read(o.out_dir + "/tls.crt"), Read(o.out_dir + "/ca.crt"), kNow).ok());
  }
}

TEST_CASE("An unusable CA stops generate unless forced", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  std::filesystem::create_directories(o.out_dir);
  GenerateResult r;

  SECTION("ca.crt without ca.key") {
    Write(o.out_dir + "/ca.crt", "x");
    const Status st = GenerateToDirectory(o, &r);
    REQUIRE_FALSE(st.ok());
    CHECK(st.message() == o.out_dir +
                              " has ca.crt but no ca.key; supply both, remove it, or pass --force "
                              "to replace it");
    o.force = true;
    REQUIRE(GenerateToDirectory(o, &r).ok());
    CHECK(r.ca_created);
  }
  SECTION("expired CA") {
    CaOptions ca_options;
    ca_options.now = kNow - std::chrono::hours(24 * 10);
    ca_options.days = 5;
    CertKeyPem old_ca;
    REQUIRE(IssueCa(ca_options, &old_ca).ok());
    Write(o.out_dir + "/ca.crt", old_ca.cert_pem);
    Write(o.out_dir + "/ca.key", old_ca.key_pem);
    const Status st = GenerateToDirectory(o, &r);
    REQUIRE_FALSE(st.ok());
    CHECK(st.message().find("is unusable (ca.crt is expired or not yet valid)") !=
          std::string::npos);
    o.force = true;
    REQUIRE(GenerateToDirectory(o, &r).ok());
    CHECK(r.ca_created);
    CHECK(Read(o.out_dir + "/ca.crt") != old_ca.cert_pem);
  }
}

TEST_CASE("GenerateToDirectory validates its options", "[unit][certs]") {
  TempDir tmp;
  GenerateOptions o = Options(tmp);
  GenerateResult r;
  GenerateOptions bad = o;
  bad.service = "Not_A_Label";
  CHECK(GenerateToDirectory(bad, &r).message() ==
        "--service must be a DNS label (a Service name), got \"Not_A_Label\"");
  bad = o;
  bad.ns = "a.b";
  CHECK(GenerateToDirectory(bad, &r).message() == "--namespace must be a DNS label, got \"a.b\"");
  bad = o;
  bad.leaf_days = 0;
  CHECK(GenerateToDirectory(bad, &r).message() == "--days must be between 1 and 36500");
  bad = o;
  bad.ca_days = 40000;
  CHECK(GenerateToDirectory(bad, &r).message() == "--ca-days must be between 1 and 36500");
  bad = o;
  bad.extra_sans = {"bad name"};
  CHECK(GenerateToDirectory(bad, &r).message() == "not a DNS name or IP address: \"bad name\"");
  CHECK_FALSE(runtime::PathExists(o.out_dir));
}

}  // namespace wasd::certs
