// WorkQueue: the reconciler's queue of Deployment keys ("namespace/name").
//
//  * De-duplication: a key waiting in the queue is queued once however often
//    it is added; a key being processed that is added again is queued once
//    more when its worker calls Done() — so one key is never processed by two
//    workers at a time, and no change is lost.
//  * Delays: AddAfter() holds a key back until its time (the sooner of two
//    delays wins). A delay of kBatchedDelay or more (a settle time, a long
//    backoff) ends on the next kDelayTick boundary of the clock, so keys
//    held back at about the same time come out together and idle workers
//    wake once per tick, not once per key (the gang doctor defers each of a
//    thousand new Deployments by its settle time); shorter delays keep their
//    exact time.
//  * Per-key exponential backoff: AddRateLimited() delays by
//    base * 2^(failures) capped at max, counting failures per key until
//    Forget() (called after a successful reconcile).
//  * Time is injected (a clock function) so tests are exact: TryGet() never
//    blocks and uses the injected clock.
//
// Thread-safe: every method may be called from any thread.
#ifndef WASD_RECONCILER_WORK_QUEUE_H_
#define WASD_RECONCILER_WORK_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace wasd::reconciler {

// A delay this long or longer is rounded up to the next kDelayTick (at most
// 10 % later).
inline constexpr std::chrono::milliseconds kBatchedDelay{1'000};
inline constexpr std::chrono::milliseconds kDelayTick{100};

struct WorkQueueOptions {
  // First retry after a failed reconcile: 100 ms lets a conflict caused by a
  // stale cache clear (the watch event usually arrives within milliseconds).
  std::chrono::milliseconds base_delay{100};
  // Longest backoff: 5 minutes, so a Deployment that keeps failing (e.g. the
  // API server rejects its objects) is still retried a few times an hour
  // without flooding the server or the log.
  std::chrono::milliseconds max_delay{300'000};
};

// The backoff before retry number `failures` (0-based): base * 2^failures,
// capped at max. Pure.
std::chrono::milliseconds BackoffFor(const WorkQueueOptions& options, int failures);

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WorkQueue(
      WorkQueueOptions options = {},
      std::function<Clock::time_point()> now = [] { return Clock::now(); });
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `key` now (no-op when already queued or after ShutDown()).
  void Add(const std::string& key);
  // Queues `key` after `delay` (<= 0: now).
  void AddAfter(const std::string& key, std::chrono::milliseconds delay);
  // Queues `key` after its backoff and counts one more failure.
  void AddRateLimited(const std::string& key);
  // Resets the failure count of `key`.
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready (returns true, the key now "processing") or
  // the queue is shut down (returns false). `waited` gets how long the key
  // sat in the queue since it became ready.
  bool Get(std::string* key, std::chrono::nanoseconds* waited = nullptr);
  // Like Get() but never blocks: false when no key is ready at now().
  bool TryGet(std::string* key, std::chrono::nanoseconds* waited = nullptr);
  // Marks `key` processed; re-queues it if it was added meanwhile.
  void Done(const std::string& key);
  // Wakes every Get(); later adds are ignored.
  void ShutDown();
  bool shutting_down() const;

  std::size_t Len() const;         // keys ready to be processed
  std::size_t DelayedLen() const;  // keys waiting for their delay
  // For metrics: keys queued so far (a key already waiting is not counted
  // again), and AddRateLimited() calls so far.
  std::uint64_t adds() const;
  std::uint64_t retries() const;

 private:
  void AddLocked(const std::string& key, Clock::time_point now);
  // Drops `key` from delayed_ and due_ (when there).
  void EraseDelayedLocked(const std::string& key);
  // Moves delayed keys that are due into the queue; returns the earliest
  // remaining due time (or max()).
  Clock::time_point PromoteLocked(Clock::time_point now);
  bool PopLocked(std::string* key, std::chrono::nanoseconds* waited, Clock::time_point now);

  const WorkQueueOptions options_;
  const std::function<Clock::time_point()> now_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;                  // guarded by mu_
  std::set<std::string, std::less<>> dirty_;       // queued or to re-queue; guarded by mu_
  std::set<std::string, std::less<>> processing_;  // guarded by mu_
  std::map<std::string, Clock::time_point, std::less<>> ready_since_;  // guarded by mu_
  std::map<std::string, Clock::time_point, std::less<>> delayed_;      // key -> due; guarded by mu_
  // delayed_ by due time, so that a Get() looks only at the keys that are due
  // (thousands of keys can wait: the gang doctor's settle time); guarded by mu_
  std::set<std::pair<Clock::time_point, std::string>> due_;
  std::map<std::string, int, std::less<>> failures_;  // guarded by mu_
  bool shutting_down_ = false;                        // guarded by mu_
  std::uint64_t adds_ = 0;                            // guarded by mu_
  std::uint64_t retries_ = 0;                         // guarded by mu_
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_WORK_QUEUE_H_
