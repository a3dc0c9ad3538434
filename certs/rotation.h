// Certificate rotation, one pass: read the TLS Secret, create or renew what
// DecideRotation() asks for (writing the Secret with its resourceVersion as
// the precondition), then inject the Secret's CA into the webhook
// configurations. A Secret not marked wasd-managed is left alone and nothing
// is injected (its owner — a user, cert-manager's cainjector — does that).
// The loop around it (interval, SIGTERM) is the caller's.
//
// CA renewal is two-phase (docs/design.md Q17): the Secret gets the new CA and a
// leaf signed by it, and keeps the previous CA certificate under
// `ca-previous.crt` until `previous_ca_overlap` has passed (annotation
// wasd.io/previous-ca-until, RFC 3339). While it is there the injected
// caBundle holds both CAs, so the API server trusts the old leaf that the
// webhook pods still serve until kubelet refreshes their Secret volume, and
// the new one after. The first pass after the overlap drops it.
//
// Synchronous; uses the given CertApi from the calling thread only.
#ifndef WASD_CERTS_ROTATION_H_
#define WASD_CERTS_ROTATION_H_

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "certs/cert_api.h"
#include "certs/injector.h"
#include "certs/issuer.h"
#include "certs/tls_secret.h"

namespace wasd::certs {

using base::Result;
using base::Status;

// Default renew-before: 90 days ahead of the leaf's notAfter (a quarter of
// the default one-year lifetime), plenty of time to notice a failing rotation.
inline constexpr std::chrono::seconds kDefaultRenewBefore = std::chrono::hours(24 * 90);
// A write that lost a race (another replica rotating at the same moment) is
// re-read and re-decided at most this many times per pass.
inline constexpr int kMaxSecretAttempts = 3;
// How long the previous CA stays in the caBundle after a CA renewal: far
// beyond kubelet's Secret volume refresh (its sync period plus the cache
// TTL: about a minute or two) and the webhook's 2 s reload, and longer than
// the default 1 h check interval, so at least one pass sees both phases.
inline constexpr std::chrono::seconds kDefaultPreviousCaOverlap = std::chrono::hours(2);
inline constexpr char kPreviousCaKey[] = "ca-previous.crt";
inline constexpr char kPreviousCaUntilAnnotation[] = "wasd.io/previous-ca-until";

struct RotationOptions {
  std::string service;
  std::string ns;  // namespace of the Service and the Secret
  std::string secret_name;
  std::vector<std::string> webhook_configs;
  std::vector<std::string> extra_sans;
  KeyType key_type = KeyType::kEcdsaP256;
  int leaf_days = 365;
  int ca_days = 3650;
  std::chrono::seconds renew_before = kDefaultRenewBefore;
  std::chrono::seconds previous_ca_overlap = kDefaultPreviousCaOverlap;
  // A named configuration that does not exist (yet) is skipped, not an error:
  // the chart's pre-install/pre-upgrade pass runs before helm creates them.
  bool skip_missing_webhook_configs = false;
};

struct RotationReport {
  RotationDecision decision;  // the last decision taken
  bool secret_written = false;
  std::string leaf_serial;  // hex serial of the leaf now in the Secret ("" if unknown)
  SystemTime leaf_not_after{};
  std::vector<InjectOutcome> injected;
  bool previous_ca_in_bundle = false;  // the injected bundle held the previous CA too
  bool previous_ca_dropped = false;    // this pass removed it (overlap over)
};

// One rotation pass at `now`. Fails on invalid options (names, SANs), API
// errors, repeated write conflicts, or injection errors; a foreign Secret is
// not a failure (report.decision says kLeaveForeign).
Status RotateOnce(CertApi& api, const RotationOptions& options, SystemTime now,
                  RotationReport* report);

}  // namespace wasd::certs

#endif  // WASD_CERTS_ROTATION_H_
