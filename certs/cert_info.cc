#include "certs/cert_info.h"

#include <arpa/inet.h>
#include <openssl/pem.h>

#include <climits>
#include <ctime>

namespace wasd::certs {
namespace {

BioPtr MemBio(std::string_view pem) {
  // PEM inputs are small (a few KB); INT_MAX is the BIO API's own limit.
  if (pem.size() > static_cast<std::size_t>(INT_MAX)) return nullptr;
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

Status ParseCertificatePem(std::string_view pem, X509Ptr* out) {
  BioPtr bio = MemBio(pem);
  if (!bio) return Status::Error(OpenSslError("cannot read certificate"));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::Error(OpenSslError("not a PEM certificate"));
  *out = std::move(cert);
  return Status::Ok();
}

Status ParsePrivateKeyPem(std::string_view pem, PkeyPtr* out) {
  BioPtr bio = MemBio(pem);
  if (!bio) return Status::Error(OpenSslError("cannot read private key"));
  // An empty passphrase callback result: encrypted keys fail instead of prompting.
  PkeyPtr key(PEM_read_bio_PrivateKey(
      bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (!key) return Status::Error(OpenSslError("not a PEM private key"));
  *out = std::move(key);
  return Status::Ok();
}

Status Asn1ToSystemTime(const ASN1_TIME* t, SystemTime* out) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    return Status::Error(OpenSslError("malformed certificate time"));
  }
  const std::time_t secs = timegm(&tm);
  *out = std::chrono::system_clock::from_time_t(secs);
  return Status::Ok();
}

Status CertificateValidity(std::string_view pem, SystemTime* not_before, SystemTime* not_after) {
  X509Ptr cert;
  Status st = ParseCertificatePem(pem, &cert);
  if (!st.ok()) return st;
  st = Asn1ToSystemTime(X509_get0_notBefore(cert.get()), not_before);
  if (!st.ok()) return st;
  return Asn1ToSystemTime(X509_get0_notAfter(cert.get()), not_after);
}

bool NeedsRenewal(std::string_view cert_pem, SystemTime now, std::chrono::seconds renew_before) {
  SystemTime not_before;
  SystemTime not_after;
  if (!CertificateValidity(cert_pem, &not_before, &not_after).ok()) return true;
  if (now < not_before) return true;
  return not_after <= now + renew_before;
}

Status CertificateSans(std::string_view pem, std::vector<std::string>* dns,
                       std::vector<std::string>* ips) {
  X509Ptr cert;
  Status st = ParseCertificatePem(pem, &cert);
  if (!st.ok()) return st;
  dns->clear();
  ips->clear();
  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return Status::Ok();
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
    if (gn->type == GEN_DNS) {
      const ASN1_IA5STRING* s = gn->d.dNSName;
      dns->emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                        static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (gn->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = gn->d.iPAddress;
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      char text[INET6_ADDRSTRLEN] = {};
      if ((ASN1_STRING_length(ip) == 4 || ASN1_STRING_length(ip) == 16) &&
          inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof(text)) != nullptr) {
        ips->emplace_back(text);
      }
    }
  }
  return Status::Ok();
}

bool IsCa(X509* cert) {
  // X509_check_ca: 1 means basicConstraints CA:TRUE (other non-zero values
  // cover legacy v1 roots and Netscape types, which we do not issue).
  return cert != nullptr && X509_check_ca(cert) == 1;
}

Status CheckKeyMatchesCertificate(std::string_view cert_pem, std::string_view key_pem) {
  X509Ptr cert;
  Status st = ParseCertificatePem(cert_pem, &cert);
  if (!st.ok()) return st;
  PkeyPtr key;
  st = ParsePrivateKeyPem(key_pem, &key);
  if (!st.ok()) return st;
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return Status::Error(OpenSslError("private key does not match the certificate"));
  }
  return Status::Ok();
}

Status VerifyChain(std::string_view leaf_pem, std::string_view ca_pem, SystemTime at) {
  X509Ptr leaf;
  Status st = ParseCertificatePem(leaf_pem, &leaf);
  if (!st.ok()) return st;
  X509Ptr ca;
  st = ParseCertificatePem(ca_pem, &ca);
  if (!st.ok()) return st;
  X509StorePtr store(X509_STORE_new());
  X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr) != 1) {
    return Status::Error(OpenSslError("cannot set up certificate verification"));
  }
  X509_STORE_CTX_set_time(ctx.get(), 0, std::chrono::system_clock::to_time_t(at));
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    return Status::Error(std::string("certificate does not verify against the CA: ") +
                         X509_verify_cert_error_string(err));
  }
  return Status::Ok();
}

}  // namespace wasd::certs
