// RFC 3339 times, the one format and parse of wasd: the times Kubernetes
// objects carry (metav1.Time "2026-12-03T17:25:00Z", metav1.MicroTime
// "2026-12-03T17:25:00.000123Z"), the log lines' times, the certificates'
// annotations and an exec credential plugin's expiry.
//
// Formatting writes UTC with 'Z', in whole seconds or with six fraction
// digits, from the proleptic Gregorian calendar of <chrono> (no gmtime_r,
// no locale). Parsing accepts what RFC 3339 section 5.6 allows and Go's
// time.Parse(time.RFC3339) reads: YYYY-MM-DDTHH:MM:SS, an optional fraction
// of any length, then Z or a numeric offset ±HH:MM ('t' and 'z' in lower case
// too); a date that does not exist (February 30) is refused, a leap second
// (:60) is read as the first second of the next minute.
//
// Pure (the caller reads the clock); thread-safe.
#ifndef WASD_BASE_TIME_H_
#define WASD_BASE_TIME_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wasd::base {

enum class TimePrecision {
  kSeconds,  // "2026-12-03T17:25:00Z" (metav1.Time)
  kMicros,   // "2026-12-03T17:25:00.000123Z" (metav1.MicroTime, log lines)
};

// Appends `t` (UTC; truncated towards the past to the precision) to `*out`.
// Years outside 0..9999 are written with as many digits as they need.
void AppendRfc3339(std::string* out, std::chrono::system_clock::time_point t,
                   TimePrecision precision = TimePrecision::kSeconds);
std::string FormatRfc3339(std::chrono::system_clock::time_point t,
                          TimePrecision precision = TimePrecision::kSeconds);

// The time `text` names, to the nanosecond (further fraction digits are
// dropped); nullopt when it is not an RFC 3339 date-time.
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);
// The same in whole seconds since 1970-01-01T00:00:00Z (the fraction dropped).
std::optional<std::int64_t> ParseRfc3339Seconds(std::string_view text);

}  // namespace wasd::base

#endif  // WASD_BASE_TIME_H_
