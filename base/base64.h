// Base64 (RFC 4648 §4, the standard alphabet with padding, no line breaks):
// how Kubernetes encodes []byte fields — an AdmissionReview's patch, a
// Secret's data, a webhook's caBundle, a kubeconfig's *-data. Pure;
// thread-safe.
#ifndef WASD_BASE_BASE64_H_
#define WASD_BASE_BASE64_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace wasd::base {

std::string Base64Encode(std::string_view data);

// Decodes padded standard base64. Fails (kInvalidArgument) on a length that
// is not a multiple of 4, a byte outside the alphabet, whitespace, or
// padding anywhere but the end.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace wasd::base

#endif  // WASD_BASE_BASE64_H_
