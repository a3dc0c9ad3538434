// WorkerLoop (see worker_loop.h).
#include "reconciler/worker_loop.h"

#include <algorithm>
#include <exception>

namespace wasd::reconciler {

WorkerLoop::WorkerLoop(Reconciler& reconciler, const runtime::Logger& log, Metrics* metrics,
                       std::chrono::milliseconds enqueue_delay)
    : reconciler_(reconciler), log_(log), metrics_(metrics), enqueue_delay_(enqueue_delay) {}

WorkerLoop::~WorkerLoop() { Stop(); }

void WorkerLoop::Enqueue(const std::string& key) {
  if (enqueue_delay_ > std::chrono::milliseconds(0)) {
    queue_.AddAfter(key, enqueue_delay_);
  } else {
    queue_.Add(key);
  }
}

void WorkerLoop::Start(int workers) {
  for (int i = 0; i < std::max(1, workers); ++i) workers_.emplace_back([this] { Work(); });
}

void WorkerLoop::Stop() {
  queue_.ShutDown();
  for (std::thread& w : workers_) w.join();
  workers_.clear();
}

void WorkerLoop::Work() {
  std::string key;
  std::chrono::nanoseconds waited{};
  while (queue_.Get(&key, &waited)) {
    if (metrics_ != nullptr) metrics_->ObserveQueueLatency(waited);
    const auto start = metrics_ != nullptr ? metrics_->ReconcileStarted() : Metrics::Clock::now();
    ReconcileResult r;
    try {
      r = reconciler_.Reconcile(key);
    } catch (const std::exception& e) {
      r.status = base::Status::Error(base::Status::Kind::kBadResponse, e.what());
    }
    if (metrics_ != nullptr) {
      Metrics::Outcome outcome = Metrics::Outcome::kSuccess;
      if (!r.status.ok()) {
        outcome = Metrics::Outcome::kError;
      } else if (r.requeue_after) {
        outcome = Metrics::Outcome::kRequeueAfter;
      }
      metrics_->ReconcileFinished(start, outcome);
    }
    if (!r.status.ok()) {
      log_.Warn("reconcile failed; retrying with backoff", {{"controller", reconciler_.Name()},
                                                            {"deployment", key},
                                                            {"error", r.status.ToString()},
                                                            {"retries", queue_.NumRequeues(key)}});
      queue_.AddRateLimited(key);
    } else {
      queue_.Forget(key);
      if (r.requeue_after) queue_.AddAfter(key, *r.requeue_after);
    }
    queue_.Done(key);
  }
}

}  // namespace wasd::reconciler
