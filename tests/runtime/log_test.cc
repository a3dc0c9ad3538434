#include "runtime/log.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

namespace wasd::runtime {
namespace {

std::string Escaped(std::string_view in) {
  std::string out;
  base::AppendJsonEscaped(&out, in);
  return out;
}

TEST_CASE("JSON escaping", "[unit][base]") {
  CHECK(Escaped("plain") == "plain");
  CHECK(Escaped("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(Escaped("line\nnext\ttab\r") == "line\\nnext\\ttab\\r");
  CHECK(Escaped(std::string_view("\x01\x1f\x7f", 3)) == "\\u0001\\u001f\\u007f");
  CHECK(Escaped("gr\xC3\xBC\xC3\x9F") == "gr\xC3\xBC\xC3\x9F");  // valid UTF-8 kept
  CHECK(Escaped("\xE2\x80\xA6") == "\xE2\x80\xA6");
  CHECK(Escaped("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");
  CHECK(Escaped("bad\xFFx") == "bad\\ufffdx");                // invalid byte replaced
  CHECK(Escaped("cut\xC3") == "cut\\ufffd");                  // truncated sequence
  CHECK(Escaped("\xC0\xAF") == "\\ufffd\\ufffd");             // overlong
  CHECK(Escaped("\xED\xA0\x80") == "\\ufffd\\ufffd\\ufffd");  // surrogate
}

TEST_CASE("JSON escaping in runs and around every kind of byte", "[unit][base]") {
  CHECK(Escaped("") == "");
  CHECK(Escaped("\"") == "\\\"");
  CHECK(Escaped("ab\"cd\\") == "ab\\\"cd\\\\");
  CHECK(Escaped("x\xC3\xBCy\x7Fz\x01") == "x\xC3\xBCy\\u007fz\\u0001");
  CHECK(Escaped("\xFF\xFE") == "\\ufffd\\ufffd");
  // Every byte alone and between plain text: the same as one byte at a time.
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    std::string want;
    if (c == '"') {
      want = "\\\"";
    } else if (c == '\\') {
      want = "\\\\";
    } else if (c == '\n') {
      want = "\\n";
    } else if (c == '\r') {
      want = "\\r";
    } else if (c == '\t') {
      want = "\\t";
    } else if (b < 0x20 || b == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", b);
      want = buf;
    } else if (b >= 0x80) {
      want = "\\ufffd";  // a lone byte of 0x80 or more is never valid UTF-8
    } else {
      want = std::string(1, c);
    }
    INFO("byte " << b);
    CHECK(Escaped(std::string(1, c)) == want);
    CHECK(Escaped("ab" + std::string(1, c) + "cd") == "ab" + want + "cd");
  }
}

TEST_CASE("log times match gmtime_r and printf", "[unit][base]") {
  const std::int64_t kSecs[] = {0,
                                59,
                                86'399,
                                86'400,
                                951'782'400,
                                951'868'799,
                                1'767'323'045,
                                4'107'542'400,
                                4'102'444'799,
                                9'223'372'035};
  const std::int64_t kMicros[] = {0, 6, 999'999};
  for (const std::int64_t secs : kSecs) {
    for (const std::int64_t micros : kMicros) {
      std::string line;
      FormatLogLine(&line, secs * 1'000'000'000 + micros * 1000 + 999, LogLevel::kInfo, "m", {});
      const auto t = static_cast<std::time_t>(secs);
      std::tm tm{};
      gmtime_r(&t, &tm);
      char want[64];
      std::snprintf(want, sizeof want, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\",",
                    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                    static_cast<long>(micros));
      INFO(secs << " s " << micros << " us");
      CHECK(line.rfind(want, 0) == 0);
    }
  }
}

TEST_CASE("numbers in a log line print as printf's %lld and %.3f", "[unit][base]") {
  const double kDoubles[] = {0.0,     -0.0,    0.0005,  0.0015, 0.0025,   1.0005, 2.5e-4,
                             -0.0004, 0.12345, 123.456, 1e15,   1.25e300, -7.0625};
  for (const double d : kDoubles) {
    std::string line;
    FormatLogLine(&line, 0, LogLevel::kInfo, "m", {{"d", d}});
    char want[400];
    std::snprintf(want, sizeof want, ",\"d\":%.3f}\n", d);
    INFO(d);
    CHECK(line.size() > std::string(want).size());
    CHECK(line.substr(line.size() - std::string(want).size()) == want);
  }
  const long long kInts[] = {0, -1, 422, 9'223'372'036'854'775'807LL,
                             -9'223'372'036'854'775'807LL - 1};
  for (const long long i : kInts) {
    std::string line;
    FormatLogLine(&line, 0, LogLevel::kInfo, "m", {{"i", i}});
    CHECK(line.find(",\"i\":" + std::to_string(i) + "}") != std::string::npos);
  }
}

TEST_CASE("a log line is one JSON object with typed fields", "[unit][base]") {
  std::string line;
  // 2026-01-02T03:04:05.000006Z
  FormatLogLine(
      &line, 1767323045000006000, LogLevel::kInfo, "admission",
      {{"uid", "abc"}, {"allowed", true}, {"code", 422}, {"latency_ms", 0.1234}, {"empty", ""}});
  CHECK(line ==
        "{\"time\":\"2026-01-02T03:04:05.000006Z\",\"level\":\"info\",\"msg\":\"admission\","
        "\"uid\":\"abc\",\"allowed\":true,\"code\":422,\"latency_ms\":0.123,\"empty\":\"\"}\n");
}

TEST_CASE("long values are cut", "[unit][base]") {
  std::string line;
  const std::string big(5000, 'x');
  FormatLogLine(&line, 0, LogLevel::kWarn, "m", {{"error", big}});
  CHECK(line.size() < 1200);
  CHECK(line.find(std::string(kMaxLogValueBytes, 'x') + "\xE2\x80\xA6\"") != std::string::npos);
}

TEST_CASE("levels", "[unit][base]") {
  LogLevel l{};
  REQUIRE(ParseLogLevel("warn", &l));
  CHECK(l == LogLevel::kWarn);
  CHECK_FALSE(ParseLogLevel("verbose", &l));
  Logger logger(LogLevel::kWarn, -1);
  CHECK_FALSE(logger.Enabled(LogLevel::kInfo));
  CHECK(logger.Enabled(LogLevel::kError));
  logger.Error("dropped: fd -1 fails quietly");
}

TEST_CASE("text format: time, level, msg first, then key=value", "[unit][base]") {
  std::string line;
  const nlohmann::json labels = {{"app", "x"}};
  FormatLogLine(
      &line, 1767323045000006000, LogLevel::kWarn, "gates lifted",
      {{"deployment", "ns/web"}, {"pods", 3}, {"reason", "no carrier"}, {"labels", labels}},
      LogFormat::kText);
  CHECK(line ==
        "time=2026-01-02T03:04:05.000006Z level=warn msg=\"gates lifted\" deployment=ns/web pods=3 "
        "reason=\"no carrier\" labels={\"app\":\"x\"}\n");
}

TEST_CASE("JSON values are written compact in a JSON line", "[unit][base]") {
  std::string line;
  const nlohmann::json names = {"a", "b"};
  FormatLogLine(&line, 0, LogLevel::kInfo, "m", {{"dnsNames", names}});
  CHECK(line ==
        "{\"time\":\"1970-01-01T00:00:00.000000Z\",\"level\":\"info\",\"msg\":\"m\","
        "\"dnsNames\":[\"a\",\"b\"]}\n");
}

TEST_CASE("log formats parse", "[unit][base]") {
  LogFormat f{};
  REQUIRE(ParseLogFormat("text", &f));
  CHECK(f == LogFormat::kText);
  REQUIRE(ParseLogFormat("json", &f));
  CHECK(f == LogFormat::kJson);
  CHECK_FALSE(ParseLogFormat("xml", &f));
}

}  // namespace
}  // namespace wasd::runtime
