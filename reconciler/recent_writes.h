// RecentWrites: what this reconciler wrote a moment ago and its caches have
// not seen yet — the answer the API server gave to each create, patch and
// delete, kept until the watch delivers the same (or a newer) version.
//
// Without it a reconcile that runs right after a write would plan from the
// stale cache and write again (a second create → AlreadyExists, a second gate
// lift → failed `test`): correct in the end, but not "exactly one write per
// change". Entries also expire after kRecentWriteTtl, in case a relist skipped
// the version we wrote.
//
// Thread-safe: all methods may be called from any thread.
#ifndef WASD_RECONCILER_RECENT_WRITES_H_
#define WASD_RECONCILER_RECENT_WRITES_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "planner/object_util.h"

namespace wasd::reconciler {

// A watch event normally arrives within milliseconds; 30 s covers a watch
// that reconnects, without hiding a genuine later change for long.
inline constexpr std::chrono::seconds kRecentWriteTtl{30};

// What kind of object an entry is about.
enum class Kind { kWorkload, kPodGroup, kPod };

class RecentWrites {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RecentWrites(std::function<Clock::time_point()> now = [] { return Clock::now(); })
      : now_(std::move(now)) {}

  // The server's answer to our create/patch (or a fresh GET after a conflict).
  // Ignored when the watch has already reported that object (by uid)
  // deleted: an answer that arrives after the DELETED event must not bring
  // the object back (a PodGroup deleted behind its finalizer would look
  // "still Terminating" for kRecentWriteTtl).
  void Record(Kind kind, const planner::Object& object);
  // We deleted (ns, name) with this uid and the server no longer has it.
  void RecordDeleted(Kind kind, const std::string& ns, const std::string& name,
                     const std::string& uid);

  // A watch event for the object (from the informer handlers): drops the
  // entry once the cache holds our version or a newer one, or a deletion.
  void Observe(Kind kind, const nlohmann::json& object, bool deleted);

  // The object to plan with: the cached one, or ours when the cache lags.
  // nullptr = absent.
  planner::Object Resolve(Kind kind, const std::string& ns, const std::string& name,
                          const planner::Object& cached) const;

  std::size_t size() const;

 private:
  struct Entry {
    planner::Object object;  // nullptr: deleted by us
    std::string uid;         // of the object written/deleted
    std::string resource_version;
    Clock::time_point at;
  };
  static std::string KeyOf(Kind kind, const std::string& ns, const std::string& name);

  // Drops tombstones older than kRecentWriteTtl. Requires mu_.
  void ExpireTombstones() const;

  const std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Entry> entries_;  // guarded by mu_
  // UIDs whose DELETED event was observed, with when, oldest first; a UID is
  // never reused, so kRecentWriteTtl bounds how long one matters.
  mutable std::map<std::string, Clock::time_point> gone_;                     // guarded by mu_
  mutable std::deque<std::pair<Clock::time_point, std::string>> gone_order_;  // guarded by mu_
};

// True when resourceVersion `a` is known to be the same as or newer than `b`
// (both decimal, as every API server uses in practice; otherwise only equal
// strings count).
bool VersionAtLeast(const std::string& a, const std::string& b);

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_RECENT_WRITES_H_
