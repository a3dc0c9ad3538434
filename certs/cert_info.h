// Reading certificates and keys: PEM parsing, validity dates, chain checks,
// and the renewal decision. Pure functions over PEM text and a caller-given
// time (no clock, no files). Thread-safe: no shared state.
#ifndef WASD_CERTS_CERT_INFO_H_
#define WASD_CERTS_CERT_INFO_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "certs/openssl_handles.h"

namespace wasd::certs {

using base::Result;
using base::Status;

using SystemTime = std::chrono::system_clock::time_point;

// Parses the first certificate in `pem`. Fails on anything else.
Status ParseCertificatePem(std::string_view pem, X509Ptr* out);

// Parses a PEM private key (PKCS#8, or the traditional EC/RSA forms).
Status ParsePrivateKeyPem(std::string_view pem, PkeyPtr* out);

// Converts an ASN1_TIME to a time point. Fails on a malformed time.
Status Asn1ToSystemTime(const ASN1_TIME* t, SystemTime* out);

// The certificate's notBefore/notAfter. Fails if `pem` does not parse.
Status CertificateValidity(std::string_view pem, SystemTime* not_before, SystemTime* not_after);

// True when the certificate in `cert_pem` must be replaced at `now`: it does
// not parse, is not yet valid, or its notAfter is at or before
// now + renew_before. A certificate with exactly renew_before left is renewed.
bool NeedsRenewal(std::string_view cert_pem, SystemTime now, std::chrono::seconds renew_before);

// The subjectAltName entries of the certificate in `pem`: DNS names, and IP
// addresses in their usual text form ("127.0.0.1", "::1"). A certificate
// without the extension gives two empty lists. Fails if `pem` does not parse.
Status CertificateSans(std::string_view pem, std::vector<std::string>* dns,
                       std::vector<std::string>* ips);

// True if the certificate carries basicConstraints CA:TRUE.
bool IsCa(X509* cert);

// Fails unless `key_pem` is the private key of the certificate `cert_pem`.
Status CheckKeyMatchesCertificate(std::string_view cert_pem, std::string_view key_pem);

// Verifies that `leaf_pem` chains to the single trusted root `ca_pem` at time
// `at`, for TLS server use. The error names OpenSSL's verify reason.
Status VerifyChain(std::string_view leaf_pem, std::string_view ca_pem, SystemTime at);

}  // namespace wasd::certs

#endif  // WASD_CERTS_CERT_INFO_H_
