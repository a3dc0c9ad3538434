#include "kube/rate_limiter.h"

#include <algorithm>

namespace wasd::kube {

TokenBucket::TokenBucket(double qps, int burst, Now now)
    : qps_(qps), burst_(std::max(burst, 1)), now_(std::move(now)), tokens_(burst_), at_(now_()) {}

void TokenBucket::Refill(Clock::time_point now) {
  if (now <= at_) return;
  const double elapsed = std::chrono::duration<double>(now - at_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  at_ = now;
}

std::chrono::nanoseconds TokenBucket::Reserve() {
  if (unlimited()) return std::chrono::nanoseconds{0};
  std::lock_guard<std::mutex> lock(mu_);
  Refill(now_());
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::nanoseconds{0};
  return std::chrono::nanoseconds(static_cast<std::int64_t>(-tokens_ / qps_ * 1e9));
}

void TokenBucket::Cancel() {
  if (unlimited()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Refill(now_());
  tokens_ = std::min(burst_, tokens_ + 1);
}

}  // namespace wasd::kube
