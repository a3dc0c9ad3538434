// DeletedNames: the Workloads and PodGroups whose deletion the caches saw
// lately, by namespace/name. The executor re-reads a group object's owner
// live before creating it (the garbage collector may delete the object
// before the owner's own deletion reaches our other watch); for a name that
// was never deleted there is no such race to guard, so the cached owner the
// plan was made from is enough and the create costs one request, not two.
//
// Bounded: entries older than kDeletedNamesFor are dropped, and at most
// kDeletedNamesMax are kept (the oldest go first; a name that falls out is
// answered "deleted", so an overflow costs a read, never safety).
//
// Thread-safe.
#ifndef WASD_RECONCILER_DELETED_NAMES_H_
#define WASD_RECONCILER_DELETED_NAMES_H_

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace wasd::reconciler {

inline constexpr std::chrono::minutes kDeletedNamesFor{10};
inline constexpr std::size_t kDeletedNamesMax = 100000;

class DeletedNames {
 public:
  using Clock = std::chrono::steady_clock;
  explicit DeletedNames(std::function<Clock::time_point()> now = Clock::now,
                        std::size_t max = kDeletedNamesMax)
      : now_(std::move(now)), max_(max) {}

  void Record(const std::string& ns, const std::string& name);
  // True when ns/name was deleted within kDeletedNamesFor, or when the set
  // overflowed since its oldest entry (it cannot tell any more).
  bool Seen(const std::string& ns, const std::string& name) const;
  std::size_t size() const;

 private:
  void ExpireLocked(Clock::time_point now) const;

  std::function<Clock::time_point()> now_;
  std::size_t max_;
  mutable std::mutex mu_;
  // key -> the time of its newest deletion; order: (time, key), oldest first.
  mutable std::unordered_map<std::string, Clock::time_point> at_;
  mutable std::deque<std::pair<Clock::time_point, std::string>> order_;
  mutable Clock::time_point overflowed_until_{};
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_DELETED_NAMES_H_
