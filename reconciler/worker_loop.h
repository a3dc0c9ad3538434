// WorkerLoop: the generic part of a controller — a work queue of keys and the
// workers that hand each key to one Reconciler, then retry it with backoff
// on failure or requeue it when the reconcile asks. It knows nothing of what
// a reconcile does.
//
// Each loop has its own queue, so one controller's backlog or backoff never
// delays another's. `enqueue_delay` is how long a key waits after it is
// queued by an event (Enqueue): 0 for the plan (act at once), the settle time
// for the gang doctor (events of a gang on its way merge into one look).
//
// Thread-safe: Enqueue from any thread; Start/Stop from the owner.
#ifndef WASD_RECONCILER_WORKER_LOOP_H_
#define WASD_RECONCILER_WORKER_LOOP_H_

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "reconciler/metrics.h"
#include "reconciler/reconciler.h"
#include "reconciler/work_queue.h"
#include "runtime/log.h"

namespace wasd::reconciler {

class WorkerLoop {
 public:
  // `metrics`: where reconcile outcomes, queue latency and queue depth go
  // (null: none). Both must outlive the loop.
  WorkerLoop(Reconciler& reconciler, const runtime::Logger& log, Metrics* metrics,
             std::chrono::milliseconds enqueue_delay = {});
  ~WorkerLoop();
  WorkerLoop(const WorkerLoop&) = delete;
  WorkerLoop& operator=(const WorkerLoop&) = delete;

  // A change may concern `key`: reconcile it after enqueue_delay (a key
  // already waiting keeps the sooner time).
  void Enqueue(const std::string& key);
  // Starts `workers` threads (at least one).
  void Start(int workers);
  // Closes the queue and joins the workers (a reconcile in flight ends first).
  void Stop();

  WorkQueue& queue() { return queue_; }

 private:
  void Work();

  Reconciler& reconciler_;
  const runtime::Logger& log_;
  Metrics* metrics_;
  const std::chrono::milliseconds enqueue_delay_;
  WorkQueue queue_;
  std::vector<std::thread> workers_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_WORKER_LOOP_H_
