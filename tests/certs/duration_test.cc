#include "certs/duration.h"

#include <catch2/catch.hpp>

namespace wasd::certs {

TEST_CASE("ParseDuration reads Go-style h/m/s sequences", "[unit][certs]") {
  std::chrono::seconds d{};
  REQUIRE(ParseDuration("2160h", &d));
  CHECK(d == std::chrono::hours(2160));
  REQUIRE(ParseDuration("1h30m", &d));
  CHECK(d == std::chrono::minutes(90));
  REQUIRE(ParseDuration("45s", &d));
  CHECK(d == std::chrono::seconds(45));
  REQUIRE(ParseDuration("0s", &d));
  CHECK(d == std::chrono::seconds(0));
  REQUIRE(ParseDuration("1h1m1s", &d));
  CHECK(d == std::chrono::seconds(3661));
}

TEST_CASE("ParseDuration rejects what Go would not, and huge values", "[unit][certs]") {
  std::chrono::seconds d{7};
  for (const char* bad : {"", "h", "10", "10d", "-1h", "1.5h", "1h ", " 1h", "1hm",
                          "99999999999999999999h", "900000h"}) {
    INFO(bad);
    CHECK_FALSE(ParseDuration(bad, &d));
  }
  CHECK(d == std::chrono::seconds(7));  // untouched on failure
}

TEST_CASE("FormatDuration round-trips", "[unit][certs]") {
  CHECK(FormatDuration(std::chrono::hours(2160)) == "2160h");
  CHECK(FormatDuration(std::chrono::seconds(3661)) == "1h1m1s");
  CHECK(FormatDuration(std::chrono::seconds(0)) == "0s");
  CHECK(FormatDuration(std::chrono::minutes(5)) == "5m");
}

}  // namespace wasd::certs
