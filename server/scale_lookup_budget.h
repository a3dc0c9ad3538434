// Bounds on the deployments/scale lookups the webhook makes (issue 30 L4).
// A scale review is the only one that costs an API call (a GET of the
// Deployment by wasd's service account), so a client that can reach the
// admission port could queue them faster than the lookup workers drain
// them; the API server would then give up on the queued reviews and, with
// the scale webhook's `failurePolicy: Ignore`, admit them unchecked. Two
// bounds keep the queue short:
//
//   - ScaleLookupBudget: at most `limit` lookups queued or running; beyond
//     it the review is answered 503 at once (nothing is queued);
//   - RequestTimeout: the review's deadline, from the `timeout` query
//     parameter kube-apiserver adds to every webhook call (`?timeout=10s`, a
//     Go duration); a lookup whose deadline has passed while it waited for a
//     worker is dropped (answered 503 without the GET): nobody is waiting
//     for its answer.
//
// Pure (ParseRequestTimeout) and a plain atomic counter; thread-safe.
#ifndef WASD_SERVER_SCALE_LOOKUP_BUDGET_H_
#define WASD_SERVER_SCALE_LOOKUP_BUDGET_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace wasd::server {

class ScaleLookupBudget {
 public:
  explicit ScaleLookupBudget(std::int64_t limit) : limit_(limit) {}
  ScaleLookupBudget(const ScaleLookupBudget&) = delete;
  ScaleLookupBudget& operator=(const ScaleLookupBudget&) = delete;

  // Takes one place; false (nothing taken) when `limit` are taken.
  bool TryAcquire() {
    std::int64_t now = pending_.load(std::memory_order_relaxed);
    while (now < limit_) {
      if (pending_.compare_exchange_weak(now, now + 1, std::memory_order_relaxed)) return true;
    }
    return false;
  }
  // Gives back a place taken by TryAcquire.
  void Release() { pending_.fetch_sub(1, std::memory_order_relaxed); }

  std::int64_t pending() const { return pending_.load(std::memory_order_relaxed); }
  std::int64_t limit() const { return limit_; }

 private:
  const std::int64_t limit_;
  std::atomic<std::int64_t> pending_{0};
};

// The value of the `timeout` query parameter of a request target such as
// "/validate-apps-v1-deployment?timeout=10s", as a duration; nullopt when
// there is none or it is not a positive Go duration ("10s", "2.5s", "1m0s",
// "500ms"; units h, m, s, ms, us, µs, ns).
std::optional<std::chrono::nanoseconds> ParseRequestTimeout(std::string_view target);

// kube-apiserver's default webhook timeout (timeoutSeconds unset): the
// deadline of a review whose target carries none.
inline constexpr std::chrono::seconds kDefaultReviewTimeout{10};

}  // namespace wasd::server

#endif  // WASD_SERVER_SCALE_LOOKUP_BUDGET_H_
