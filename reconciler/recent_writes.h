// RecentWrites: what this reconciler wrote a moment ago and its caches have
// not seen yet — the answer the API server gave to each create, patch and
// delete, kept until the watch delivers the same (or a newer) version.
//
// Without it a reconcile that runs right after a write would plan from the
// stale cache and write again (a second create → AlreadyExists, a second gate
// lift → failed `test`): correct in the end, but not "exactly one write per
// change".
//
// What an entry keeps: the answer through the projection of its kind's cache
// (reconciler/projections.h), encoded as MessagePack like the compact
// informers — so a plan sees the same members whether an object comes from
// the cache or from here, and a gate lift's answer (a 15 KB pod) costs ~0.5
// KB until its watch event arrives. A watch that lags behind a burst of
// writes (100,000 gate lifts while the pod watch still delivers the pods'
// ADDED events) holds one entry per write.
//
// When an entry ends: when the watch delivers our version, a newer one, a
// deletion or another object under the name (Observe); or once it is older
// than kRecentWriteTtl *and* the watch of its resource has delivered some
// event newer than our write (then the cache is authoritative: a relist
// skipped our version, or the object changed without an event we could
// match). While the watch lags behind our write the entry stays, up to
// kRecentWriteMaxAge — expiring it then would make the next plan repeat the
// write against a stale cache. An answer the watch has already passed is not
// recorded at all (its event came first: the cache holds it). Expired entries
// are swept at most once per kRecentWriteTtl.
//
// "Passed" compares decimal resourceVersions, as VersionAtLeast does; the
// events of one watch arrive in resourceVersion order. A watch is told
// apart by kind and apiVersion (native PodGroups from Volcano's).
//
// Thread-safe: all methods may be called from any thread.
#ifndef WASD_RECONCILER_RECENT_WRITES_H_
#define WASD_RECONCILER_RECENT_WRITES_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "objects/object_util.h"

namespace wasd::reconciler {

// A watch event normally arrives within milliseconds; 30 s covers a watch
// that reconnects, without hiding a genuine later change for long.
inline constexpr std::chrono::seconds kRecentWriteTtl{30};
// The longest an entry outlives kRecentWriteTtl while its watch has not yet
// reached our write: a watch that far behind is broken (it is then
// restarted and relisted well within this), and the entry must not hide the
// object for ever if no event of its kind ever comes.
inline constexpr std::chrono::minutes kRecentWriteMaxAge{10};

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
  void Record(Kind kind, const objects::Object& object);
  // We deleted (ns, name) with this uid and the server no longer has it.
  // The deletion's resourceVersion is unknown: the entry ends by
  // kRecentWriteTtl at the latest.
  void RecordDeleted(Kind kind, const std::string& ns, const std::string& name,
                     const std::string& uid);
  // We deleted the object and the server answered with its final state
  // (custom resources and pods do), whose resourceVersion is the deletion's.
  void RecordGone(Kind kind, const nlohmann::json& final_state);

  // A watch event for the object (from the informer handlers): drops the
  // entry once the cache holds our version or a newer one, or a deletion;
  // and notes how far the watch of `kind` has come.
  void Observe(Kind kind, const nlohmann::json& object, bool deleted);

  // The object to plan with: the cached one, or ours when the cache lags
  // (decoded from the entry: a new object, with only the projected members).
  // nullptr = absent.
  //
  // `read_cache` returns the cache's copy; it is called after the entry was
  // looked up, outside the lock. The order matters: the informer updates its
  // cache before its handler calls Observe, so an entry missing here is
  // either one never written or one whose version the cache already holds.
  // (A copy read before the lookup could predate an entry Observe removed
  // meanwhile — the plan would then repeat our write.)
  using CacheRead = std::function<objects::Object()>;
  objects::Object Resolve(Kind kind, const std::string& ns, const std::string& name,
                          const CacheRead& read_cache) const;

  std::size_t size() const;
  // Bytes held by the entries' encoded objects (for tests and the bench).
  std::size_t encoded_bytes() const;

 private:
  struct Entry {
    std::string packed;  // MessagePack of the projected object; "" = deleted by us
    std::string uid;     // of the object written/deleted
    std::string resource_version;
    Clock::time_point at;
    std::size_t mark = 0;  // index into marks_: the watch this entry waits for
  };
  static std::string KeyOf(Kind kind, const std::string& ns, const std::string& name);

  // Stores a tombstone. Requires mu_.
  void PutTombstone(Kind kind, const std::string& key, Entry e, const nlohmann::json* final_state);
  // True when `e` may be dropped at `now`. Requires mu_.
  bool Expired(const Entry& e, Clock::time_point now) const;
  // Drops tombstones older than kRecentWriteTtl, and (at most once per
  // kRecentWriteTtl) every expired entry. Requires mu_.
  void Sweep(Clock::time_point now) const;

  const std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Entry> entries_;  // guarded by mu_
  // UIDs whose DELETED event was observed, with when, oldest first; a UID is
  // never reused, so kRecentWriteTtl bounds how long one matters.
  mutable std::map<std::string, Clock::time_point> gone_;                     // guarded by mu_
  mutable std::deque<std::pair<Clock::time_point, std::string>> gone_order_;  // guarded by mu_
  // The index in marks_ of (kind, apiVersion) — one watch: PodGroups of
  // each backend are their own — added when new. Requires mu_.
  std::size_t MarkOf(Kind kind, const nlohmann::json& object) const;

  // By watch ("<kind>/<apiVersion>"): the newest decimal resourceVersion an
  // event carried (0: none yet). A handful of entries. guarded by mu_
  mutable std::vector<std::pair<std::string, std::uint64_t>> marks_;
  mutable Clock::time_point last_sweep_{};  // guarded by mu_
};

// True when resourceVersion `a` is known to be the same as or newer than `b`
// (both decimal, as every API server uses in practice; otherwise only equal
// strings count).
bool VersionAtLeast(const std::string& a, const std::string& b);

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_RECENT_WRITES_H_
