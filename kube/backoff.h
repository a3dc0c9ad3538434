// Backoff and Retry-After: pure arithmetic for when to try again (plus two
// small impure helpers at the end: a random source and an interruptible sleep).
//
// BackoffDelay() is exponential with a cap and "equal jitter": the delay for
// attempt n is base = min(initial * factor^n, max), then a uniformly random
// part of `jitter` * base is taken off, so a herd of clients reconnecting
// after an API server restart spreads out but never waits longer than `max`.
// Randomness is injected (a number in [0, 1)) so tests are exact.
//
// ParseRetryAfter() reads an HTTP Retry-After value: delta-seconds or an
// HTTP-date (RFC 9110 IMF-fixdate), against an injected "now".
//
// Free functions; thread-safe.
#ifndef WASD_KUBE_BACKOFF_H_
#define WASD_KUBE_BACKOFF_H_

#include <chrono>
#include <optional>
#include <stop_token>
#include <string_view>

namespace wasd::kube {

struct BackoffPolicy {
  // First retry after ~initial; client-go's reflector starts at 800 ms, we
  // start lower because most of our retries follow a single dropped request.
  std::chrono::milliseconds initial{200};
  // Upper bound of any one wait: 30 s, like client-go's watch backoff cap.
  std::chrono::milliseconds max{30'000};
  double factor = 2.0;
  // Fraction of the delay that is randomised away, in [0, 1].
  double jitter = 0.5;
};

// The wait before retry number `attempt` (0 = first retry). `random01` must
// be in [0, 1); it is clamped otherwise. Never negative, never above max.
std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int attempt, double random01);

// A random number in [0, 1) from a thread-local generator (impure, for
// callers that are not tests).
double Random01();

// Sleeps for `d` unless stop is requested first; false when stopped.
bool SleepUnlessStopped(std::chrono::milliseconds d, const std::stop_token& stop);

// Parses a Retry-After header value. Returns nullopt when it is neither a
// non-negative integer nor an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT").
// A date in the past gives 0 s. Values are clamped to `max`.
std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value,
                                                    std::chrono::system_clock::time_point now,
                                                    std::chrono::seconds max);

}  // namespace wasd::kube

#endif  // WASD_KUBE_BACKOFF_H_
