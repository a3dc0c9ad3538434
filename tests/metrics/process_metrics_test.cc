#include "metrics/process_metrics.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <string>

namespace wasd::metrics {
namespace {

// A real /proc/<pid>/stat line whose command name holds a space and a ')'.
constexpr char kStat[] =
    "4242 (wasd (x) y) S 1 4242 4242 0 -1 4194560 1370 0 0 0 25 17 0 0 20 0 5 0 "
    "123456 91234304 2301 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST_CASE("ParseProcStat counts fields after the last parenthesis", "[unit]") {
  const auto s = ParseProcStat(kStat);
  REQUIRE(s.has_value());
  CHECK(s->utime_ticks == 25);
  CHECK(s->stime_ticks == 17);
  CHECK(s->start_ticks == 123456);
  CHECK(s->vsize_bytes == 91234304);
  CHECK(s->rss_pages == 2301);
}

TEST_CASE("ParseProcStat refuses malformed text", "[unit]") {
  CHECK_FALSE(ParseProcStat("").has_value());
  CHECK_FALSE(ParseProcStat("4242 (wasd) S 1 2 3").has_value());
  CHECK_FALSE(ParseProcStat("4242 wasd S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22")
                  .has_value());
  std::string bad = kStat;
  bad.replace(bad.find(" 25 "), 4, " x5 ");
  CHECK_FALSE(ParseProcStat(bad).has_value());
}

TEST_CASE("ParseBootTime reads the btime line", "[unit]") {
  CHECK(ParseBootTime("cpu  1 2 3\nbtime 1764633600\nprocesses 7\n") == 1764633600);
  CHECK_FALSE(ParseBootTime("cpu 1\nprocesses 7\n").has_value());
  CHECK_FALSE(ParseBootTime("btime soon\n").has_value());
}

TEST_CASE("the running process reads sensibly", "[unit]") {
  const ProcessSample s = ReadProcessSample();
  REQUIRE(s.resident_bytes.has_value());
  CHECK(*s.resident_bytes > 1 << 20);  // a test binary has more than 1 MiB resident
  REQUIRE(s.open_fds.has_value());
  CHECK(*s.open_fds >= 3);  // stdin, stdout, stderr
  REQUIRE(s.start_time_seconds.has_value());
  const double now = static_cast<double>(std::time(nullptr));
  CHECK(*s.start_time_seconds <= now + 1);
  CHECK(*s.start_time_seconds > now - 3600);  // started within the hour
  REQUIRE(s.cpu_seconds.has_value());
  CHECK(*s.cpu_seconds >= 0);
}

TEST_CASE("only readable values are rendered", "[unit]") {
  ProcessSample s;
  s.open_fds = 7;
  std::string out;
  AppendProcessMetrics(&out, s);
  CHECK(out ==
        "# HELP process_open_fds File descriptors the process has open.\n"
        "# TYPE process_open_fds gauge\n"
        "process_open_fds 7\n");
}

TEST_CASE("build info carries version and revision", "[unit]") {
  std::string out;
  AppendBuildInfo(&out);
  CHECK(out.find("# TYPE wasd_build_info gauge\n") != std::string::npos);
  const std::string line = "wasd_build_info{version=\"" + std::string(BuildVersion()) +
                           "\",revision=\"" + std::string(BuildRevision()) + "\"} 1\n";
  CHECK(out.find(line) != std::string::npos);
  CHECK_FALSE(BuildVersion().empty());
}

}  // namespace
}  // namespace wasd::metrics
