// WorkerLoop: events merge into one look after the enqueue delay; a failed
// reconcile comes back with backoff, a requeue asked for comes back, and two
// loops over the same keys never wait for each other.
#include "reconciler/worker_loop.h"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace wasd::reconciler {
namespace {

using namespace std::chrono_literals;

// Records each key it is given; fails a key's first `fail_first` reconciles.
class Recorder : public Reconciler {
 public:
  std::string_view Name() const override { return "recorder"; }
  ReconcileResult Reconcile(const std::string& key) override {
    std::lock_guard lock(mu_);
    ReconcileResult r;
    if (++seen_[key] <= fail_first)
      r.status = base::Status::Error(base::Status::Kind::kBadResponse, "x");
    if (key == "ns/again" && seen_[key] == 1) r.requeue_after = 10ms;
    cv_.notify_all();
    return r;
  }
  // Waits (at most 10 s) until `key` was reconciled `n` times.
  bool WaitFor(const std::string& key, int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return seen_[key] >= n; });
  }
  int Seen(const std::string& key) {
    std::lock_guard lock(mu_);
    return seen_[key];
  }
  int fail_first = 0;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, int> seen_;
};

TEST_CASE("worker loop: events within the enqueue delay merge into one waiting key", "[unit]") {
  Recorder r;
  runtime::Logger log(runtime::LogLevel::kError);
  WorkerLoop loop(r, log, nullptr, 5s);
  loop.Enqueue("ns/a");
  loop.Enqueue("ns/a");
  loop.Enqueue("ns/a");
  loop.Enqueue("ns/b");
  CHECK(loop.queue().Len() == 0);  // nothing ready before the delay
  CHECK(loop.queue().DelayedLen() == 2);
  WorkerLoop now(r, log, nullptr);
  now.Enqueue("ns/a");
  now.Enqueue("ns/a");
  CHECK(now.queue().Len() == 1);
}

TEST_CASE("worker loop: a failure is retried, a requeue comes back, both loops run", "[unit]") {
  Recorder plan;
  plan.fail_first = 1;
  Recorder doctor;
  runtime::Logger log(runtime::LogLevel::kError);
  WorkerLoop a(plan, log, nullptr);
  WorkerLoop b(doctor, log, nullptr);
  a.Start(2);
  b.Start(1);
  a.Enqueue("ns/web");
  b.Enqueue("ns/again");
  CHECK(plan.WaitFor("ns/web", 2));      // failed once, retried after its backoff
  CHECK(doctor.WaitFor("ns/again", 2));  // asked to come back
  a.Stop();
  b.Stop();
  CHECK(plan.Seen("ns/web") == 2);  // the retry succeeded: not queued again
  CHECK(doctor.Seen("ns/web") == 0);
}

}  // namespace
}  // namespace wasd::reconciler
