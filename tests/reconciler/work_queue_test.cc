// WorkQueue: de-duplication, processing exclusivity, delays and per-key
// backoff, on an injected clock.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "reconciler/work_queue.h"

namespace wasd::reconciler {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  WorkQueue::Clock::time_point t{std::chrono::seconds(1000)};
  std::function<WorkQueue::Clock::time_point()> Fn() {
    return [this] { return t; };
  }
};

TEST_CASE("work queue: duplicates merge while queued", "[unit]") {
  FakeClock clock;
  WorkQueue q({}, clock.Fn());
  q.Add("ns/a");
  q.Add("ns/b");
  q.Add("ns/a");
  CHECK(q.Len() == 2);
  std::string key;
  REQUIRE(q.TryGet(&key));
  CHECK(key == "ns/a");
  REQUIRE(q.TryGet(&key));
  CHECK(key == "ns/b");
  CHECK_FALSE(q.TryGet(&key));
}

TEST_CASE("work queue: a key added while processing comes back once after Done", "[unit]") {
  FakeClock clock;
  WorkQueue q({}, clock.Fn());
  q.Add("k");
  std::string key;
  REQUIRE(q.TryGet(&key));
  q.Add("k");
  q.Add("k");
  CHECK(q.Len() == 0);  // not handed to a second worker
  std::string other;
  CHECK_FALSE(q.TryGet(&other));
  q.Done("k");
  CHECK(q.Len() == 1);
  REQUIRE(q.TryGet(&key));
  q.Done("k");
  CHECK_FALSE(q.TryGet(&key));
}

TEST_CASE("work queue: adds count keys queued, retries count backoffs (metrics)", "[unit]") {
  FakeClock clock;
  WorkQueue q({}, clock.Fn());
  q.Add("a");
  q.Add("b");
  q.Add("a");  // merged with the waiting one: not an add
  CHECK(q.adds() == 2);
  std::string key;
  REQUIRE(q.TryGet(&key));
  q.Add(key);  // while processing: queued again after Done, counted now
  q.Add(key);
  CHECK(q.adds() == 3);
  q.Done(key);
  CHECK(q.adds() == 3);  // the re-queue on Done is the add already counted
  q.AddRateLimited("c");
  q.AddRateLimited("c");
  CHECK(q.retries() == 2);
  CHECK(q.adds() == 3);  // delayed keys are added when due
  clock.t += 10s;
  CHECK(q.TryGet(&key));
  CHECK(q.adds() == 4);
}

TEST_CASE("work queue: delays, sooner wins, immediate add overrides", "[unit]") {
  FakeClock clock;
  WorkQueue q({}, clock.Fn());
  std::string key;
  q.AddAfter("k", 10s);
  q.AddAfter("k", 3s);
  CHECK(q.DelayedLen() == 1);
  clock.t += 2s;
  CHECK_FALSE(q.TryGet(&key));
  clock.t += 1s;
  std::chrono::nanoseconds waited{-1};
  REQUIRE(q.TryGet(&key, &waited));
  CHECK(waited == 0ns);
  q.Done(key);
  q.AddAfter("j", 10s);
  q.Add("j");
  CHECK(q.DelayedLen() == 0);
  REQUIRE(q.TryGet(&key));
  CHECK(key == "j");
}

TEST_CASE("work queue: a long delay ends on the next tick, a short one keeps its time", "[unit]") {
  FakeClock clock;
  clock.t += 12ms;  // off the tick grid
  WorkQueue q({}, clock.Fn());
  std::string key;
  q.AddAfter("long-a", kBatchedDelay + 30ms);  // due 1.042 s → 1.1 s
  q.AddAfter("long-b", kBatchedDelay + 60ms);  // due 1.072 s → 1.1 s, with long-a
  q.AddAfter("short", kBatchedDelay - 1ms);    // due 1.011 s exactly
  clock.t += kBatchedDelay - 1ms;
  REQUIRE(q.TryGet(&key));
  CHECK(key == "short");
  q.Done(key);
  clock.t += 30ms;  // 1.041 s: long-a's own time has not come either
  CHECK_FALSE(q.TryGet(&key));
  clock.t += 1ms;  // 1.042 s: its own time, but not the tick
  CHECK_FALSE(q.TryGet(&key));
  clock.t += 57ms;  // 1.099 s
  CHECK_FALSE(q.TryGet(&key));
  clock.t += 1ms;  // 1.1 s: both at once
  std::vector<std::string> got;
  while (q.TryGet(&key)) {
    got.push_back(key);
    q.Done(key);
  }
  CHECK(got == std::vector<std::string>{"long-a", "long-b"});
  // A due time already on a tick stays.
  q.AddAfter("exact", 2 * kBatchedDelay);
  clock.t += 2 * kBatchedDelay;
  REQUIRE(q.TryGet(&key));
  CHECK(key == "exact");
}

TEST_CASE("work queue: many delayed keys come out when each is due, in due order", "[unit]") {
  FakeClock clock;
  WorkQueue q({}, clock.Fn());
  // Added in reverse: key i is due after (1000 - i) ms.
  for (int i = 0; i < 1000; ++i)
    q.AddAfter("k" + std::to_string(i), std::chrono::milliseconds(1000 - i));
  q.AddAfter("k0", 5ms);      // sooner wins, also among many
  q.AddAfter("k999", 900ms);  // later changes nothing
  CHECK(q.DelayedLen() == 1000);
  std::string key;
  clock.t += 1ms;
  REQUIRE(q.TryGet(&key));
  CHECK(key == "k999");
  q.Done(key);
  CHECK_FALSE(q.TryGet(&key));
  clock.t += 4ms;  // 5 ms: k0 (moved up), k995..k998
  std::vector<std::string> got;
  while (q.TryGet(&key)) {
    got.push_back(key);
    q.Done(key);
  }
  CHECK(got == std::vector<std::string>{"k998", "k997", "k996", "k0", "k995"});
  CHECK(q.DelayedLen() == 994);
  q.Add("k500");  // an immediate add takes the key out of the delayed ones
  CHECK(q.DelayedLen() == 993);
  clock.t += 1s;
  int rest = 0;
  while (q.TryGet(&key)) {
    q.Done(key);
    ++rest;
  }
  CHECK(rest == 994);
  CHECK(q.DelayedLen() == 0);
}

TEST_CASE("work queue: per-key exponential backoff until Forget", "[unit]") {
  WorkQueueOptions options;
  options.base_delay = 100ms;
  options.max_delay = 1s;
  CHECK(BackoffFor(options, 0) == 100ms);
  CHECK(BackoffFor(options, 1) == 200ms);
  CHECK(BackoffFor(options, 3) == 800ms);
  CHECK(BackoffFor(options, 4) == 1s);
  CHECK(BackoffFor(options, 1000) == 1s);

  FakeClock clock;
  WorkQueue q(options, clock.Fn());
  std::string key;
  for (const auto expected : {100ms, 200ms, 400ms}) {
    q.AddRateLimited("k");
    clock.t += expected - 1ms;
    CHECK_FALSE(q.TryGet(&key));
    clock.t += 1ms;
    REQUIRE(q.TryGet(&key));
    q.Done(key);
  }
  CHECK(q.NumRequeues("k") == 3);
  CHECK(q.NumRequeues("other") == 0);
  q.Forget("k");
  CHECK(q.NumRequeues("k") == 0);
  q.AddRateLimited("k");
  clock.t += 100ms;
  CHECK(q.TryGet(&key));
}

TEST_CASE("work queue: latency is measured from when the key became ready", "[unit]") {
  FakeClock clock;
  WorkQueue q({}, clock.Fn());
  q.Add("k");
  clock.t += 250ms;
  std::string key;
  std::chrono::nanoseconds waited{};
  REQUIRE(q.TryGet(&key, &waited));
  CHECK(waited == 250ms);
}

TEST_CASE("work queue: blocking Get wakes for a delayed key and on shutdown", "[unit]") {
  WorkQueue q;
  q.AddAfter("k", 30ms);
  std::string key;
  REQUIRE(q.Get(&key));
  CHECK(key == "k");
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    q.ShutDown();
  });
  CHECK_FALSE(q.Get(&key));
  stopper.join();
  q.Add("late");
  CHECK(q.Len() == 0);
}

}  // namespace
}  // namespace wasd::reconciler
