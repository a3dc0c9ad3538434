#include "base/time.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <ctime>
#include <string>

namespace wasd::base {
namespace {

using std::chrono::system_clock;
using namespace std::chrono_literals;

system_clock::time_point At(std::int64_t unix_seconds) {
  return system_clock::time_point(std::chrono::seconds(unix_seconds));
}

TEST_CASE("RFC 3339 timestamps", "[unit][base]") {
  // What the reconciler's caches and the gang doctor read (creationTimestamp,
  // the timeline): whole seconds, the fraction dropped, offsets applied.
  CHECK(ParseRfc3339Seconds("1970-01-01T00:00:00Z") == 0);
  CHECK(ParseRfc3339Seconds("2026-12-01T21:21:22Z") == 1796160082);
  CHECK(ParseRfc3339Seconds("2026-12-01T21:21:22.834160Z") == 1796160082);
  CHECK(ParseRfc3339Seconds("2026-12-01T22:21:22+01:00") == 1796160082);
  CHECK_FALSE(ParseRfc3339Seconds("2026-12-01 21:21:22Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-13-01T21:21:22Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-12-01T21:21:22").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("").has_value());
}

TEST_CASE("RFC 3339: fractions, offsets and lower case", "[unit][base]") {
  const auto base = At(1796160082);
  CHECK(ParseRfc3339("2026-12-01T21:21:22Z") == base);
  CHECK(ParseRfc3339("2026-12-01T21:21:22.5Z") == base + 500ms);
  CHECK(ParseRfc3339("2026-12-01T21:21:22.000001Z") == base + 1us);
  CHECK(ParseRfc3339("2026-12-01T21:21:22.123456789Z") == base + 123456789ns);
  // Digits past the nanosecond are dropped.
  CHECK(ParseRfc3339("2026-12-01T21:21:22.1234567891Z") == base + 123456789ns);
  CHECK(ParseRfc3339("2026-12-01t21:21:22z") == base);
  CHECK(ParseRfc3339("2026-12-01T16:51:22-04:30") == base);
  CHECK(ParseRfc3339("2026-12-02T07:21:22+10:00") == base);
  CHECK(ParseRfc3339("2026-12-01T21:21:22+00:00") == base);
  CHECK(ParseRfc3339("2026-12-01T21:21:22-00:00") == base);
  // An exec credential's expiry, as kubectl's plugins write it.
  CHECK(ParseRfc3339Seconds("2026-12-02T10:00:00Z") == 1796205600);
  // Before 1970.
  CHECK(ParseRfc3339Seconds("1969-12-31T23:59:59Z") == -1);
  CHECK(ParseRfc3339("1969-12-31T23:59:59.5Z") == At(-1) + 500ms);
}

TEST_CASE("RFC 3339: leap years, leap seconds and dates that do not exist", "[unit][base]") {
  CHECK(ParseRfc3339Seconds("2024-02-29T00:00:00Z") == 1709164800);
  CHECK(ParseRfc3339Seconds("2000-02-29T00:00:00Z") == 951782400);
  CHECK_FALSE(ParseRfc3339Seconds("2026-02-29T00:00:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("1900-02-29T00:00:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-02-30T00:00:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-04-31T00:00:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-00-10T00:00:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-01-00T00:00:00Z").has_value());
  // A leap second is the first second of the next minute.
  CHECK(ParseRfc3339Seconds("2016-12-31T23:59:60Z") == ParseRfc3339Seconds("2017-01-01T00:00:00Z"));
  CHECK_FALSE(ParseRfc3339Seconds("2026-12-01T24:00:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-12-01T23:60:00Z").has_value());
  CHECK_FALSE(ParseRfc3339Seconds("2026-12-01T23:59:61Z").has_value());
}

TEST_CASE("RFC 3339: malformed text is refused", "[unit][base]") {
  for (const char* bad :
       {"2026-12-01T21:21:22.Z", "2026-12-01T21:21:22+0100", "2026-12-01T21:21:22+01", "2026-12-01",
        "2026-12-01T21:21Z", "26-12-01T21:21:22Z", "2026-12-01T21:21:22Zx", "2026-12-01T21:21:22 Z",
        "2026/12/01T21:21:22Z", "2026-12-01T21:21:22+24:00", "2026-12-01T21:21:22+01:60",
        "+026-12-01T21:21:22Z", "2026-1a-01T21:21:22Z", "2026-12-01T21:21:22.12a4Z"}) {
    INFO(bad);
    CHECK_FALSE(ParseRfc3339(bad).has_value());
    CHECK_FALSE(ParseRfc3339Seconds(bad).has_value());
  }
}

TEST_CASE("RFC 3339 format: seconds and micros, as gmtime_r writes them", "[unit][base]") {
  const std::int64_t kSecs[] = {0,
                                59,
                                86'399,
                                86'400,
                                951'782'400,
                                951'868'799,
                                1'709'164'800,
                                1'767'323'045,
                                4'102'444'799,
                                4'107'542'400,
                                9'223'372'035,
                                -1,
                                -86'401,
                                -2'208'988'800};
  for (const std::int64_t secs : kSecs) {
    // What the copies this replaced wrote: strftime of gmtime_r.
    const auto t = static_cast<std::time_t>(secs);
    std::tm tm{};
    REQUIRE(gmtime_r(&t, &tm) != nullptr);
    char want[64];
    REQUIRE(std::strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%S", &tm) > 0);
    INFO(secs);
    CHECK(FormatRfc3339(At(secs)) == std::string(want) + "Z");
    CHECK(FormatRfc3339(At(secs) + 6us + 999ns, TimePrecision::kMicros) ==
          std::string(want) + ".000006Z");
    CHECK(FormatRfc3339(At(secs) + 999'999us, TimePrecision::kSeconds) == std::string(want) + "Z");
    // What is written reads back.
    CHECK(ParseRfc3339Seconds(FormatRfc3339(At(secs))) == secs);
    CHECK(ParseRfc3339(FormatRfc3339(At(secs) + 123'456us, TimePrecision::kMicros)) ==
          At(secs) + 123'456us);
  }
  // Just before a second: truncated towards the past, never rounded up.
  CHECK(FormatRfc3339(At(0) - 1us, TimePrecision::kMicros) == "1969-12-31T23:59:59.999999Z");
  CHECK(FormatRfc3339(At(0) - 1ns) == "1969-12-31T23:59:59Z");
  std::string out = "t=";
  AppendRfc3339(&out, At(1796160082), TimePrecision::kSeconds);
  CHECK(out == "t=2026-12-01T21:21:22Z");
}

}  // namespace
}  // namespace wasd::base
