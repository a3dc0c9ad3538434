// CA bundle injection, pure part: the RFC 6902 JSON patch that sets
// clientConfig.caBundle of every webhook in a Mutating- or
// ValidatingWebhookConfiguration, and the base64 codec the API uses for
// []byte fields. No I/O; thread-safe (no shared state).
#ifndef WASD_CERTS_CA_BUNDLE_H_
#define WASD_CERTS_CA_BUNDLE_H_

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "base/status.h"

namespace wasd::certs {

using base::Result;
using base::Status;

// Builds the patch that makes every webhook of `config` (a webhook
// configuration object as read from the API) carry base64(ca_pem) as
// clientConfig.caBundle. Webhooks that already carry exactly that value get
// no operation; when none needs a change, *patch is an empty array (send
// nothing). Otherwise the patch starts with a `test` of
// /metadata/resourceVersion (when the object has one), so a configuration
// edited since it was read is not clobbered: the server rejects the patch
// (422) and the caller re-reads and retries.
// Fails if `config` has no `webhooks` array (a config with zero webhooks
// yields an empty patch) or a webhook entry is not an object.
Status BuildCaBundlePatch(const nlohmann::json& config, std::string_view ca_pem,
                          nlohmann::json* patch);

}  // namespace wasd::certs

#endif  // WASD_CERTS_CA_BUNDLE_H_
