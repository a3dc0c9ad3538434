// TokenBucket: the client-side request rate limit (--kube-api-qps,
// --kube-api-burst), as client-go's flowcontrol limiter: `burst` requests may
// go at once, then `qps` per second on average.
//
// Reserve() takes one token and says how long its caller must wait before
// sending: tokens may go negative, so concurrent callers queue in the order
// they reserved and none is starved. A qps of 0 (or less) means no limit:
// every Reserve() returns 0.
//
// The clock is injected so tests run without sleeping. Thread-safe.
#ifndef WASD_KUBE_RATE_LIMITER_H_
#define WASD_KUBE_RATE_LIMITER_H_

#include <chrono>
#include <functional>
#include <mutex>

namespace wasd::kube {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  // `burst` < 1 is taken as 1. The bucket starts full.
  TokenBucket(
      double qps, int burst, Now now = [] { return Clock::now(); });

  bool unlimited() const { return qps_ <= 0; }
  // Takes a token; the wait before the request may be sent (0 = now).
  std::chrono::nanoseconds Reserve();
  // Gives back a token taken by Reserve() whose request was not sent (the
  // caller gave up waiting).
  void Cancel();

 private:
  void Refill(Clock::time_point now);  // mu_ held

  const double qps_;
  const double burst_;
  const Now now_;
  std::mutex mu_;
  double tokens_;         // guarded by mu_
  Clock::time_point at_;  // guarded by mu_: when tokens_ was last brought up to date
};

}  // namespace wasd::kube

#endif  // WASD_KUBE_RATE_LIMITER_H_
