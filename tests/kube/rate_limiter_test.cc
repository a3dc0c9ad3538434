#include "kube/rate_limiter.h"

#include <catch2/catch.hpp>

#include <chrono>

namespace wasd::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// A clock the test moves by hand.
struct FakeClock {
  TokenBucket::Clock::time_point t{};
  TokenBucket::Now fn() {
    return [this] { return t; };
  }
};

TEST_CASE("token bucket: burst at once, then qps", "[unit][ratelimit]") {
  FakeClock clock;
  TokenBucket b(20, 30, clock.fn());
  for (int i = 0; i < 30; ++i) CHECK(b.Reserve() == nanoseconds{0});
  // The 31st waits one token's time (50 ms at 20/s), the 32nd two.
  CHECK(b.Reserve() == milliseconds{50});
  CHECK(b.Reserve() == milliseconds{100});
  // 100 ms later both reservations are due and the bucket is empty again.
  clock.t += milliseconds{100};
  CHECK(b.Reserve() == milliseconds{50});
}

TEST_CASE("token bucket: refills at qps up to burst, never beyond", "[unit][ratelimit]") {
  FakeClock clock;
  TokenBucket b(10, 3, clock.fn());
  for (int i = 0; i < 3; ++i) CHECK(b.Reserve() == nanoseconds{0});
  clock.t += milliseconds{200};  // two tokens back
  CHECK(b.Reserve() == nanoseconds{0});
  CHECK(b.Reserve() == nanoseconds{0});
  CHECK(b.Reserve() == milliseconds{100});
  clock.t += std::chrono::hours{1};  // idle for an hour: still only 3 at once
  for (int i = 0; i < 3; ++i) CHECK(b.Reserve() == nanoseconds{0});
  CHECK(b.Reserve() == milliseconds{100});
}

TEST_CASE("token bucket: a cancelled reservation gives its token back", "[unit][ratelimit]") {
  FakeClock clock;
  TokenBucket b(1, 1, clock.fn());
  CHECK(b.Reserve() == nanoseconds{0});
  CHECK(b.Reserve() == milliseconds{1000});
  b.Cancel();
  CHECK(b.Reserve() == milliseconds{1000});
}

TEST_CASE("token bucket: qps 0 is no limit; burst below 1 is 1", "[unit][ratelimit]") {
  FakeClock clock;
  TokenBucket off(0, 0, clock.fn());
  CHECK(off.unlimited());
  for (int i = 0; i < 1000; ++i) REQUIRE(off.Reserve() == nanoseconds{0});
  TokenBucket one(2, 0, clock.fn());
  CHECK(one.Reserve() == nanoseconds{0});
  CHECK(one.Reserve() == milliseconds{500});
}

}  // namespace
}  // namespace wasd::kube
