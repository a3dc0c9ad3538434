// The TLS Secret that rotation keeps, pure part: reading its PEM fields,
// deciding what (if anything) to renew, and building the Secret to write.
// A Secret of type kubernetes.io/tls with data ca.crt, ca.key, tls.crt,
// tls.key, marked as ours by the annotation wasd.io/managed-certificate:
// "true". A Secret without that mark belongs to a user or cert-manager and is
// never written. No I/O, no clock; thread-safe.
#ifndef WASD_CERTS_TLS_SECRET_H_
#define WASD_CERTS_TLS_SECRET_H_

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "certs/cert_info.h"
#include "certs/issuer.h"

namespace wasd::certs {

using base::Result;
using base::Status;

inline constexpr char kManagedAnnotation[] = "wasd.io/managed-certificate";
inline constexpr char kTlsSecretType[] = "kubernetes.io/tls";

// The four PEM values of a TLS Secret; empty when a key is missing or not
// valid base64.
struct SecretPems {
  CertKeyPem ca;
  CertKeyPem leaf;
};

// Decodes data[ca.crt|ca.key|tls.crt|tls.key] of `secret`.
SecretPems ReadSecretPems(const nlohmann::json& secret);

// True if metadata.annotations carries wasd.io/managed-certificate: "true".
bool IsManagedSecret(const nlohmann::json& secret);

enum class RotationAction {
  kNone,            // everything is valid for longer than renew_before
  kCreate,          // no Secret yet: make CA + leaf and create it
  kRenewLeaf,       // sign a new leaf with the Secret's CA
  kRenewCaAndLeaf,  // the CA itself is missing, broken or expiring
  kLeaveForeign,    // not ours: never written
};

std::string_view RotationActionName(RotationAction action);

struct RotationDecision {
  RotationAction action = RotationAction::kNone;
  std::string reason;  // why, for the log
};

struct WantedNames {
  std::vector<std::string> dns;
  std::vector<std::string> ips;
};

// Decides what rotation must do with `secret` (nullptr: it does not exist)
// at `now`. A leaf is renewed when it is missing, unparsable, not matched by
// tls.key, not signed by ca.crt, lacks a wanted name, or NeedsRenewal() says
// so; the CA when it is missing, unparsable, not a CA, not matched by ca.key,
// or itself within renew_before of expiry.
RotationDecision DecideRotation(const nlohmann::json* secret, const WantedNames& wanted,
                                SystemTime now, std::chrono::seconds renew_before);

// The Secret to write: `base` (the existing Secret, or nullptr for a new one)
// with type, the managed annotation and the four data keys set. Other
// metadata (labels, resourceVersion for the update precondition) and other
// data keys of `base` are kept; server-owned fields that the API ignores on
// write are left as they are.
nlohmann::json BuildTlsSecret(const std::string& ns, const std::string& name,
                              const SecretPems& pems, const nlohmann::json* base);

}  // namespace wasd::certs

#endif  // WASD_CERTS_TLS_SECRET_H_
