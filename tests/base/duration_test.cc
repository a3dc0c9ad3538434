#include "base/duration.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

namespace wasd::base {
namespace {

using namespace std::chrono_literals;

TEST_CASE("ParseDuration reads Go's grammar", "[unit][base]") {
  struct Row {
    const char* text;
    std::chrono::nanoseconds want;
  };
  for (const Row& r :
       {Row{"0", 0ns}, Row{"0s", 0ns}, Row{"300ms", 300ms}, Row{"1.5s", 1500ms}, Row{"1m30s", 90s},
        Row{"1h30m", 90min}, Row{"2160h", 2160h}, Row{"1.5h", 90min}, Row{"2h45m", 165min},
        Row{"1m30.5s", 90500ms}, Row{"10us", 10us}, Row{"10\xC2\xB5s", 10us}, Row{"7ns", 7ns},
        Row{".5s", 500ms}, Row{"5.s", 5s}, Row{"+1s", 1s}, Row{"-1s", -1s}, Row{"1h1m1s", 3661s}}) {
    INFO(r.text);
    Result<std::chrono::nanoseconds> d = ParseDuration(r.text);
    REQUIRE(d.ok());
    CHECK(*d == r.want);
  }
}

TEST_CASE("ParseDuration refuses a bare number, unknown units and junk", "[unit][base]") {
  for (const char* bad : {"", "90", "1.5", "s", "10d", "1h ", " 1h", "1hm", ".s", "-", "1e3s",
                          "99999999999999999999h", "900000h", "1 s"}) {
    INFO(bad);
    Result<std::chrono::nanoseconds> d = ParseDuration(bad);
    CHECK_FALSE(d.ok());
    CHECK(d.status().message().find("invalid duration") == 0);
  }
  CHECK(ParseDuration("90").status().message().find("missing unit") != std::string::npos);
  CHECK(ParseDuration("10d").status().message().find("unknown unit \"d\"") != std::string::npos);
}

TEST_CASE("FormatDuration writes what Go's Duration.String writes", "[unit][base]") {
  CHECK(FormatDuration(0ns) == "0s");
  CHECK(FormatDuration(2160h) == "2160h0m0s");
  CHECK(FormatDuration(90min) == "1h30m0s");
  CHECK(FormatDuration(1500ms) == "1.5s");
  CHECK(FormatDuration(500ms) == "500ms");
  CHECK(FormatDuration(10us) == "10\xC2\xB5s");
  CHECK(FormatDuration(7ns) == "7ns");
  CHECK(FormatDuration(-90s) == "-1m30s");
  for (std::chrono::nanoseconds d :
       {1ns, std::chrono::nanoseconds(1500ms), std::chrono::nanoseconds(3661s),
        std::chrono::nanoseconds(2160h), std::chrono::nanoseconds(90500ms)}) {
    Result<std::chrono::nanoseconds> back = ParseDuration(FormatDuration(d));
    REQUIRE(back.ok());
    CHECK(*back == d);
  }
}

TEST_CASE("ParseBool is strconv.ParseBool", "[unit][base]") {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    INFO(t);
    REQUIRE(ParseBool(t).ok());
    CHECK(*ParseBool(t));
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    INFO(f);
    REQUIRE(ParseBool(f).ok());
    CHECK_FALSE(*ParseBool(f));
  }
  for (const char* bad : {"", "yes", "on", "tRuE", "2"}) CHECK_FALSE(ParseBool(bad).ok());
}

}  // namespace
}  // namespace wasd::base
