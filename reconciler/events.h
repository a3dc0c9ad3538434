// Events: core/v1 Events on a Deployment, as kubectl describe shows them.
// source.component and reportingComponent are "wasd-reconciler".
//
// EventJson() is pure (tested); EventRecorder posts them and suppresses a
// repeat of the same (Deployment UID, reason, message) within
// kEventRepeatWindow, so a condition that lasts (a foreign object, a
// Terminating PodGroup, an API that is not served) is reported once instead
// of on every reconcile and every resync. Failed posts are logged, never
// retried: an Event is a courtesy, not state.
//
// Thread-safe: EventRecorder may be used from any thread.
#ifndef WASD_RECONCILER_EVENTS_H_
#define WASD_RECONCILER_EVENTS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reconciler/api.h"
#include "runtime/log.h"

namespace wasd::reconciler {

inline constexpr std::string_view kComponent = "wasd-reconciler";
// Long enough that a lasting condition does not flood the Deployment's
// Events across resyncs; short enough that it shows again for someone who
// looks an hour later (kube keeps Events for one hour by default).
inline constexpr std::chrono::minutes kEventRepeatWindow{30};
// Remembered (Deployment, reason, message) triples; the oldest are dropped
// beyond this so memory stays bounded with many Deployments.
inline constexpr std::size_t kMaxRememberedEvents = 20'000;

// The Event object for `deployment`, as the JSON text that is posted
// (written directly: no DOM is built for an object that is only sent);
// `name_suffix` makes the name unique (the recorder passes a random hex
// string); `now_rfc3339` is the time.
std::string EventJson(const nlohmann::json& deployment, std::string_view type,
                      std::string_view reason, std::string_view message, std::string_view instance,
                      std::string_view name_suffix, std::string_view now_rfc3339);

// Which Events are posted again within kEventRepeatWindow. A Warning
// reports a lasting condition (a foreign object, a Terminating PodGroup, an
// API that is not served, stripped claims) and is posted once per window for
// the same (Deployment UID, reason, message), the message compared with its
// waiting-pod counts ("N pod(s)", HoldWords) read as one: a condition whose
// counts change as pods come ("2 pod(s) are held ...", then "3 pod(s) ...")
// is the same condition, posted once with the counts of its first post.
// Other numbers count (BoundBeforeGroup's "N member(s)" grows: posted again). A Normal Event
// reports an action that was just taken (a Workload or PodGroup created, a PodGroup deleted) and is
// posted every time: a PodGroup deleted at scale-to-zero and deleted again after a rollout is two
// deletions, even though both messages read the same.
//
// Remembers a 64-bit digest of each key, not the key (a Warning's message is
// a sentence: at 1,000 gangs the text would be ~250 KB held for nothing). Two
// keys with one digest hold back one Warning for one window.
//
// Not thread-safe; EventRecorder guards it.
// `key` with each count of pods ("12 pod(s)") read as "# pod(s)". Pure.
std::string WithoutCounts(std::string_view key);

class RepeatFilter {
 public:
  using Clock = std::chrono::steady_clock;
  // True when the Event should be posted now (and, for a Warning, remembers it).
  bool Admit(std::string_view type, const std::string& key, Clock::time_point now);
  std::size_t remembered() const { return recent_.size(); }

 private:
  std::map<std::uint64_t, Clock::time_point> recent_;  // digest of the key → last posted
};

class EventRecorder {
 public:
  // `normal_events` (--normal-events): post Normal Events too; false posts
  // Warnings only (each Normal Event is one more write per gang: half of a
  // scheduler-held gang's requests at creation, tools/bench/RESULTS.md).
  EventRecorder(Api& api, const runtime::Logger& log, std::string instance,
                bool normal_events = true)
      : api_(api), log_(log), instance_(std::move(instance)), normal_events_(normal_events) {}

  // Posts the Event unless RepeatFilter holds it back (a Warning posted
  // within the window) or it is Normal and Normal Events are off. Returns
  // true when it was posted. A posted Event is
  // logged ("event") unless `log_posted` is false: the caller's own line
  // says so (the gang doctor's "GangScheduled condition written"). A failed
  // post is always logged.
  bool Record(const nlohmann::json& deployment, std::string_view type, std::string_view reason,
              std::string_view message, bool log_posted = true);

 private:
  Api& api_;
  const runtime::Logger& log_;
  const std::string instance_;
  const bool normal_events_;
  std::mutex mu_;
  RepeatFilter repeats_;  // guarded by mu_
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_EVENTS_H_
