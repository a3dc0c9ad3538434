// Durations and booleans as Go writes them, so that every wasd flag reads
// the way kubectl, controller-runtime and klog flags read: one grammar for
// every command.
//
// ParseDuration is Go's time.ParseDuration: an optional sign, then one or
// more decimal numbers each followed by a unit — "300ms", "1.5h", "2h45m",
// "1m30.5s" — with units ns, us (or µs), ms, s, m, h. "0" alone is the one
// number allowed without a unit; "90" is refused (which unit did the user
// mean?). ParseBool is Go's strconv.ParseBool.
//
// Pure functions; thread-safe.
#ifndef WASD_BASE_DURATION_H_
#define WASD_BASE_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace wasd::base {

// The largest duration any wasd setting takes: 100 years. Far beyond every
// deadline and certificate lifetime, and far from overflowing nanoseconds.
inline constexpr std::chrono::hours kMaxDuration{24 * 365 * 100};

// Fails with kInvalidArgument and a one-line reason (no unit, unknown unit,
// malformed number, beyond kMaxDuration).
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// As Go's Duration.String(): "1h30m0s", "1.5s", "500ms", "0s".
std::string FormatDuration(std::chrono::nanoseconds d);

// 1, t, T, TRUE, true, True → true; 0, f, F, FALSE, false, False → false.
Result<bool> ParseBool(std::string_view text);

}  // namespace wasd::base

#endif  // WASD_BASE_DURATION_H_
