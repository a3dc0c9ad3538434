// SHA-256 fingerprints of certificate material (which files `wasd certs
// generate` wrote). Pure; thread-safe.
#ifndef WASD_CERTS_DIGEST_H_
#define WASD_CERTS_DIGEST_H_

#include <string>
#include <string_view>

namespace wasd::certs {

// Lower-case hex SHA-256 of `data`; "" only if OpenSSL fails.
std::string Sha256Hex(std::string_view data);

}  // namespace wasd::certs

#endif  // WASD_CERTS_DIGEST_H_
