#include "certs/issuer.h"

#include <arpa/inet.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>

namespace wasd::certs {
namespace {

// 128 random bits; the top bit is cleared so the DER integer stays positive
// and at most 17 octets, well inside RFC 5280's 20-octet limit.
constexpr std::size_t kSerialBytes = 16;
constexpr std::size_t kMaxDnsName = 253;  // RFC 1035 presentation-form limit
constexpr std::size_t kMaxDnsLabel = 63;
constexpr std::size_t kMaxCommonName = 64;  // X.520 ub-common-name; OpenSSL rejects longer

Status GenerateKey(KeyType type, PkeyPtr* out) {
  EVP_PKEY* raw = nullptr;
  switch (type) {
    case KeyType::kEcdsaP256: raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"); break;
    case KeyType::kRsa2048:
      raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048));
      break;
  }
  if (raw == nullptr) return Status::Error(OpenSslError("key generation failed"));
  out->reset(raw);
  return Status::Ok();
}

Status KeyToPem(EVP_PKEY* key, std::string* out) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Status::Error(OpenSslError("cannot encode private key"));
  }
  *out = BioToString(bio.get());
  return Status::Ok();
}

Status CertToPem(X509* cert, std::string* out) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return Status::Error(OpenSslError("cannot encode certificate"));
  }
  *out = BioToString(bio.get());
  return Status::Ok();
}

Status SetRandomSerial(X509* cert) {
  std::array<unsigned char, kSerialBytes> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return Status::Error(OpenSslError("no randomness for the serial number"));
  }
  bytes[0] &= 0x7f;
  // A zero serial is not allowed; force the lowest bit so that cannot happen.
  bytes[kSerialBytes - 1] |= 0x01;
  BignumPtr bn(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
  Asn1IntegerPtr serial(bn ? BN_to_ASN1_INTEGER(bn.get(), nullptr) : nullptr);
  if (!serial || X509_set_serialNumber(cert, serial.get()) != 1) {
    return Status::Error(OpenSslError("cannot set the serial number"));
  }
  return Status::Ok();
}

Status SetCommonName(X509_NAME* name, const std::string& cn) {
  // The CN is informational (clients match SANs); long service names are cut.
  const std::string value = cn.substr(0, kMaxCommonName);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                 0) != 1) {
    return Status::Error(OpenSslError("cannot set the subject name"));
  }
  return Status::Ok();
}

// Adds one extension from OpenSSL's config syntax (fixed strings only, never
// user input); `ctx` carries issuer/subject for the key identifiers.
Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  X509ExtPtr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return Status::Error(OpenSslError(std::string("cannot add extension ") + OBJ_nid2sn(nid)));
  }
  return Status::Ok();
}

Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& dns,
                          const std::vector<std::string>& ips) {
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  if (!names) return Status::Error(OpenSslError("out of memory"));
  for (const std::string& d : dns) {
    GENERAL_NAME* gn = GENERAL_NAME_new();
    ASN1_IA5STRING* ia5 = ASN1_IA5STRING_new();
    if (gn == nullptr || ia5 == nullptr ||
        ASN1_STRING_set(ia5, d.data(), static_cast<int>(d.size())) != 1) {
      GENERAL_NAME_free(gn);
      ASN1_IA5STRING_free(ia5);
      return Status::Error(OpenSslError("cannot encode DNS name " + d));
    }
    GENERAL_NAME_set0_value(gn, GEN_DNS, ia5);
    if (sk_GENERAL_NAME_push(names.get(), gn) == 0) {
      GENERAL_NAME_free(gn);
      return Status::Error(OpenSslError("out of memory"));
    }
  }
  for (const std::string& ip : ips) {
    GENERAL_NAME* gn =
        a2i_GENERAL_NAME(nullptr, nullptr, nullptr, GEN_IPADD, const_cast<char*>(ip.c_str()), 0);
    if (gn == nullptr) return Status::Error(OpenSslError("cannot encode IP address " + ip));
    if (sk_GENERAL_NAME_push(names.get(), gn) == 0) {
      GENERAL_NAME_free(gn);
      return Status::Error(OpenSslError("out of memory"));
    }
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return Status::Error(OpenSslError("cannot add subjectAltName"));
  }
  return Status::Ok();
}

Status SetValidity(X509* cert, SystemTime now, int days, const ASN1_TIME* cap) {
  if (days < 1 || days > kMaxDays) {
    return Status::Error("validity must be between 1 and " + std::to_string(kMaxDays) + " days");
  }
  const std::time_t start = std::chrono::system_clock::to_time_t(now - kBackdate);
  const std::time_t end = std::chrono::system_clock::to_time_t(now + std::chrono::hours(24) * days);
  if (ASN1_TIME_set(X509_getm_notBefore(cert), start) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert), end) == nullptr) {
    return Status::Error(OpenSslError("cannot set the validity period"));
  }
  if (cap != nullptr && ASN1_TIME_compare(X509_get0_notAfter(cert), cap) > 0 &&
      X509_set1_notAfter(cert, cap) != 1) {
    return Status::Error(OpenSslError("cannot set the validity period"));
  }
  return Status::Ok();
}

// Fills the parts every certificate shares: version 3, serial, subject,
// validity, public key.
Status StartCertificate(X509* cert, EVP_PKEY* key, const std::string& cn, SystemTime now, int days,
                        const ASN1_TIME* cap) {
  if (X509_set_version(cert, X509_VERSION_3) != 1 || X509_set_pubkey(cert, key) != 1) {
    return Status::Error(OpenSslError("cannot start certificate"));
  }
  Status st = SetRandomSerial(cert);
  if (st.ok()) st = SetCommonName(X509_get_subject_name(cert), cn);
  if (st.ok()) st = SetValidity(cert, now, days, cap);
  return st;
}

Status Sign(X509* cert, EVP_PKEY* signer) {
  if (X509_sign(cert, signer, EVP_sha256()) == 0) {
    return Status::Error(OpenSslError("signing failed"));
  }
  return Status::Ok();
}

bool IsDnsLabel(std::string_view label) {
  if (label.empty() || label.size() > kMaxDnsLabel) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  return std::all_of(label.begin(), label.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
}

}  // namespace

bool ParseKeyType(std::string_view text, KeyType* out) {
  if (text == "ecdsa") {
    *out = KeyType::kEcdsaP256;
    return true;
  }
  if (text == "rsa") {
    *out = KeyType::kRsa2048;
    return true;
  }
  return false;
}

std::string_view KeyTypeName(KeyType type) { return type == KeyType::kRsa2048 ? "rsa" : "ecdsa"; }

std::vector<std::string> ServiceDnsNames(std::string_view service, std::string_view ns) {
  const std::string base = std::string(service) + "." + std::string(ns);
  return {std::string(service), base, base + ".svc", base + ".svc.cluster.local"};
}

bool IsValidDnsName(std::string_view name) {
  if (name.empty() || name.size() > kMaxDnsName) return false;
  if (name.substr(0, 2) == "*.") name.remove_prefix(2);
  while (true) {
    const std::size_t dot = name.find('.');
    if (!IsDnsLabel(name.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    name.remove_prefix(dot + 1);
  }
}

Status SplitSans(const std::vector<std::string>& entries, std::vector<std::string>* dns,
                 std::vector<std::string>* ips) {
  for (const std::string& e : entries) {
    unsigned char buf[16];
    if (inet_pton(AF_INET, e.c_str(), buf) == 1 || inet_pton(AF_INET6, e.c_str(), buf) == 1) {
      ips->push_back(e);
    } else if (IsValidDnsName(e)) {
      dns->push_back(e);
    } else {
      return Status::Error("not a DNS name or IP address: \"" + e + "\"");
    }
  }
  return Status::Ok();
}

Status IssueCa(const CaOptions& options, CertKeyPem* out) {
  PkeyPtr key;
  Status st = GenerateKey(options.key_type, &key);
  if (!st.ok()) return st;
  X509Ptr cert(X509_new());
  if (!cert) return Status::Error(OpenSslError("out of memory"));
  st = StartCertificate(cert.get(), key.get(), options.common_name, options.now, options.days,
                        nullptr);
  if (!st.ok()) return st;
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1) {
    return Status::Error(OpenSslError("cannot set issuer"));
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  st = AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE");
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
  if (st.ok()) st = Sign(cert.get(), key.get());
  if (st.ok()) st = CertToPem(cert.get(), &out->cert_pem);
  if (st.ok()) st = KeyToPem(key.get(), &out->key_pem);
  return st;
}

Status IssueLeaf(const CertKeyPem& ca, const LeafOptions& options, CertKeyPem* out) {
  if (options.dns_names.empty() && options.ip_addresses.empty()) {
    return Status::Error("a serving certificate needs at least one DNS name or IP address");
  }
  X509Ptr ca_cert;
  Status st = ParseCertificatePem(ca.cert_pem, &ca_cert);
  if (!st.ok()) return Status::Error("CA certificate: " + st.message());
  PkeyPtr ca_key;
  st = ParsePrivateKeyPem(ca.key_pem, &ca_key);
  if (!st.ok()) return Status::Error("CA key: " + st.message());
  if (X509_check_private_key(ca_cert.get(), ca_key.get()) != 1) {
    return Status::Error(OpenSslError("the CA key does not match the CA certificate"));
  }
  if (!IsCa(ca_cert.get())) return Status::Error("the CA certificate is not a CA (CA:TRUE)");

  PkeyPtr key;
  st = GenerateKey(options.key_type, &key);
  if (!st.ok()) return st;
  X509Ptr cert(X509_new());
  if (!cert) return Status::Error(OpenSslError("out of memory"));
  st = StartCertificate(cert.get(), key.get(), options.common_name, options.now, options.days,
                        X509_get0_notAfter(ca_cert.get()));
  if (!st.ok()) return st;
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get())) != 1) {
    return Status::Error(OpenSslError("cannot set issuer"));
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, ca_cert.get(), cert.get(), nullptr, nullptr, 0);
  const char* usage = options.key_type == KeyType::kRsa2048
                          ? "critical,digitalSignature,keyEncipherment"
                          : "critical,digitalSignature";
  st = AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE");
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_key_usage, usage);
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_ext_key_usage, "serverAuth");
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
  if (st.ok()) st = AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
  if (st.ok()) st = AddSubjectAltNames(cert.get(), options.dns_names, options.ip_addresses);
  if (st.ok()) st = Sign(cert.get(), ca_key.get());
  if (st.ok()) st = CertToPem(cert.get(), &out->cert_pem);
  if (st.ok()) st = KeyToPem(key.get(), &out->key_pem);
  return st;
}

}  // namespace wasd::certs
