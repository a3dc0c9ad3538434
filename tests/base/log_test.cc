#include "base/log.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace wasd::base {
namespace {

std::string Escaped(std::string_view in) {
  std::string out;
  AppendJsonEscaped(&out, in);
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
}  // namespace wasd::base
