// Reconciler: one controller's decision for one key, as the generic worker
// loop (worker_loop.h) runs it. The manager (manager.h) owns what the
// reconcilers share — the caches, the API client, leader election, the
// scheduling-API check, probes and metrics — and each reconciler has its own
// queue: the plan (plan_reconciler.h) and the gang doctor
// (gang_status_reconciler.h) never wait for each other.
//
// Implementations must be thread-safe across keys: a loop runs reconciles of
// different keys concurrently, never two of one key at a time.
#ifndef WASD_RECONCILER_RECONCILER_H_
#define WASD_RECONCILER_RECONCILER_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace wasd::reconciler {

struct ReconcileResult {
  base::Status status;  // not ok: retry with backoff
  std::optional<std::chrono::milliseconds> requeue_after;
  int rounds = 0;  // plan rounds begun (observations made)
  int writes = 0;  // API writes this reconcile made (creates, patches, deletes; Events not counted)
};

// The sooner of two requeues; `from` wins ties.
inline void RequeueSooner(std::optional<std::chrono::milliseconds> from, ReconcileResult& into) {
  if (from && (!into.requeue_after || *from < *into.requeue_after)) into.requeue_after = from;
}

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // For logs ("plan", "gang-status").
  virtual std::string_view Name() const = 0;
  // Brings key ("namespace/name") to its desired state once.
  virtual ReconcileResult Reconcile(const std::string& key) = 0;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_RECONCILER_H_
