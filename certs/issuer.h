// Issuer: makes private keys, a self-signed CA certificate, and serving (leaf)
// certificates signed by that CA, all as PEM text. Pure computation over
// OpenSSL (no files, no clock: the caller passes "now"). Thread-safe: every
// call works on its own objects; OpenSSL 3 is thread-safe for these calls.
#ifndef WASD_CERTS_ISSUER_H_
#define WASD_CERTS_ISSUER_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "certs/cert_info.h"

namespace wasd::certs {

using base::Result;
using base::Status;

// ECDSA P-256 is the default: small keys, fast TLS handshakes.
enum class KeyType { kEcdsaP256, kRsa2048 };

// Parses "ecdsa" or "rsa". Returns false for anything else.
bool ParseKeyType(std::string_view text, KeyType* out);
std::string_view KeyTypeName(KeyType type);

// A certificate and its private key, both PEM.
struct CertKeyPem {
  std::string cert_pem;
  std::string key_pem;
};

// Certificates start this long before "now", so a node whose clock is a little
// behind the issuer's still accepts a freshly made certificate.
inline constexpr std::chrono::minutes kBackdate{60};
// Upper bound for --days/--ca-days: 100 years; beyond that the dates are
// meaningless and the arithmetic in time_t gets close to odd corners.
inline constexpr int kMaxDays = 36500;

struct CaOptions {
  std::string common_name = "wasd-webhook-ca";
  KeyType key_type = KeyType::kEcdsaP256;
  int days = 3650;  // 10 years
  SystemTime now;
};

struct LeafOptions {
  std::string common_name;
  std::vector<std::string> dns_names;     // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries (v4 or v6 text)
  KeyType key_type = KeyType::kEcdsaP256;
  int days = 365;  // 1 year
  SystemTime now;
};

// The DNS names under which the API server reaches Service `service` in
// namespace `ns`: NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local.
std::vector<std::string> ServiceDnsNames(std::string_view service, std::string_view ns);

// Sorts extra SAN entries into IP addresses (anything inet_pton accepts) and
// DNS names (RFC 1123 names, optionally with a leading "*." wildcard).
// Fails on an entry that is neither; appends to *dns and *ips.
Status SplitSans(const std::vector<std::string>& entries, std::vector<std::string>* dns,
                 std::vector<std::string>* ips);

// True if `name` is a lower/upper-case RFC 1123 DNS name of at most 253
// characters (labels of 1-63), optionally starting with "*.".
bool IsValidDnsName(std::string_view name);

// Makes a self-signed CA: basicConstraints CA:TRUE (critical), keyUsage
// keyCertSign|cRLSign (critical), SKI and AKI, random 128-bit serial.
// Fails only if OpenSSL fails or days is outside 1..kMaxDays.
Status IssueCa(const CaOptions& options, CertKeyPem* out);

// Makes a serving certificate signed by `ca`: serverAuth EKU, keyUsage
// digitalSignature (+keyEncipherment for RSA), CA:FALSE, SANs from options,
// SKI and AKI (the CA's key id), random 128-bit serial. notAfter is
// now+days, cut back to the CA's notAfter if that comes first (a leaf cannot
// usefully outlive its issuer).
// Fails if the CA PEM does not parse, its key does not match, it is not a CA,
// there are no SANs, or days is outside 1..kMaxDays.
Status IssueLeaf(const CertKeyPem& ca, const LeafOptions& options, CertKeyPem* out);

}  // namespace wasd::certs

#endif  // WASD_CERTS_ISSUER_H_
