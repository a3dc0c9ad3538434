// Go-style durations for flags such as --renew-before 2160h and
// --check-interval 1h30m: a sequence of <integer><unit> with units h, m, s.
// Pure functions; thread-safe.
#ifndef WASD_CERTS_DURATION_H_
#define WASD_CERTS_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

namespace wasd::certs {

// Parses "90s", "15m", "2160h", "1h30m". Fails (returns false) on an empty
// string, a missing or unknown unit, a sign, a fraction, or a total above
// 100 years (which no certificate setting needs, and keeps the arithmetic
// far from overflow).
bool ParseDuration(std::string_view text, std::chrono::seconds* out);

// Formats as ParseDuration reads it: "2160h", "1h30m", "45s", "0s".
std::string FormatDuration(std::chrono::seconds d);

}  // namespace wasd::certs

#endif  // WASD_CERTS_DURATION_H_
