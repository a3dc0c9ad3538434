// CA bundle injection with I/O: for each named webhook configuration, read
// it (as a MutatingWebhookConfiguration and as a ValidatingWebhookConfiguration
// — a name may exist as either or both), patch clientConfig.caBundle of every
// webhook that lacks the bundle, and retry a bounded number of times when the
// object changed under us. Synchronous; uses the given CertApi from the
// calling thread only.
#ifndef WASD_CERTS_INJECTOR_H_
#define WASD_CERTS_INJECTOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "certs/cert_api.h"

namespace wasd::certs {

using base::Result;
using base::Status;

// A configuration edited concurrently is re-read and re-patched at most this
// many times in all: a real writer storm, not bad luck, if it keeps failing.
inline constexpr int kMaxPatchAttempts = 5;

struct InjectOutcome {
  WebhookKind kind = WebhookKind::kMutating;
  std::string name;
  int webhooks = 0;      // webhooks in the configuration
  int patched = 0;       // webhooks whose caBundle was written (0: already current)
  int attempts = 0;      // PATCH requests sent
  bool missing = false;  // exists as neither kind (only with skip_missing)
};

// Injects base64(ca_pem) into every webhook of each named configuration.
// Appends one outcome per configuration found. Fails on the first name that
// exists as neither kind (unless skip_missing: then one outcome with
// `missing` set, and the next name), on an API error, on a malformed
// configuration, or when kMaxPatchAttempts conflicts in a row were hit;
// outcomes gathered before the failure are kept.
Status InjectCaBundle(CertApi& api, const std::vector<std::string>& names, std::string_view ca_pem,
                      std::vector<InjectOutcome>* outcomes, bool skip_missing = false);

}  // namespace wasd::certs

#endif  // WASD_CERTS_INJECTOR_H_
