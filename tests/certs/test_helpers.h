// Helpers shared by the certs unit tests: a self-deleting temporary
// directory and small certificate inspectors built on OpenSSL.
#ifndef WASD_TESTS_CERTS_TEST_HELPERS_H_
#define WASD_TESTS_CERTS_TEST_HELPERS_H_

#include <arpa/inet.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "certs/cert_info.h"
#include "certs/openssl_handles.h"

namespace wasd::certs::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wasd-certs-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline X509Ptr MustParse(const std::string& pem) {
  X509Ptr cert;
  ParseCertificatePem(pem, &cert);
  return cert;
}

struct Sans {
  std::set<std::string> dns;
  std::set<std::string> ips;  // printed form, e.g. "127.0.0.1"
};

inline Sans ReadSans(X509* cert) {
  Sans out;
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
    if (gn->type == GEN_DNS) {
      const ASN1_IA5STRING* s = gn->d.dNSName;
      out.dns.insert(std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                 static_cast<std::size_t>(ASN1_STRING_length(s))));
    } else if (gn->type == GEN_IPADD) {
      const int len = gn->d.iPAddress->length;
      char text[INET6_ADDRSTRLEN] = {};
      if (inet_ntop(len == 4 ? AF_INET : AF_INET6, gn->d.iPAddress->data, text, sizeof(text))) {
        out.ips.insert(text);
      }
    }
  }
  return out;
}

inline std::string SerialHex(X509* cert) {
  BignumPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  char* hex = BN_bn2hex(bn.get());
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  return out;
}

}  // namespace wasd::certs::testing

#endif  // WASD_TESTS_CERTS_TEST_HELPERS_H_
