#include "runtime/log.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/time.h"
#include "base/utf8.h"

namespace wasd::runtime {
namespace {

// RFC 3339 UTC with microseconds, e.g. 2026-01-02T03:04:05.000006Z.
void AppendTime(std::string* out, std::int64_t unix_nanos) {
  base::AppendRfc3339(out,
                      std::chrono::system_clock::time_point(
                          std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              std::chrono::nanoseconds(unix_nanos))),
                      base::TimePrecision::kMicros);
}

void AppendString(std::string* out, std::string_view value) {
  out->push_back('"');
  if (value.size() > kMaxLogValueBytes) {
    base::AppendJsonEscaped(out, value.substr(0, kMaxLogValueBytes));
    out->append("\xE2\x80\xA6");  // "…"
  } else {
    base::AppendJsonEscaped(out, value);
  }
  out->push_back('"');
}

// A JSON value, compact; a long one is cut and given as a string.
std::string JsonText(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxLogValueBytes) {
    std::string cut;
    AppendString(&cut, text);
    return cut;
  }
  return text;
}

// logfmt: a value goes bare when it is non-empty and has no space, quote,
// equals sign or control byte; otherwise quoted, with JSON escapes.
void AppendTextValue(std::string* out, std::string_view value) {
  bool bare = !value.empty() && value.size() <= kMaxLogValueBytes;
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == '"' || c == '=' || c == 0x7F || c >= 0x80) bare = false;
  }
  if (bare) {
    out->append(value);
  } else {
    AppendString(out, value);
  }
}

void AppendValue(std::string* out, const LogField& f, LogFormat format) {
  switch (f.kind()) {
    case LogField::Kind::kString:
      if (format == LogFormat::kText) {
        AppendTextValue(out, f.string_value());
      } else {
        AppendString(out, f.string_value());
      }
      return;
    case LogField::Kind::kJson: out->append(JsonText(f.json_value())); return;
    case LogField::Kind::kBool: out->append(f.bool_value() ? "true" : "false"); return;
    case LogField::Kind::kInt: {
      char buf[24];  // an int64 in decimal with its sign
      const auto r = std::to_chars(buf, buf + sizeof buf, f.int_value());
      out->append(buf, r.ptr);
      return;
    }
    case LogField::Kind::kDouble: {
      if (!std::isfinite(f.double_value())) {
        out->append("null");
        return;
      }
      // printf's "%.3f" (to_chars with a precision is specified as printf in
      // the C locale), without printf's cost. 320 bytes hold the longest
      // double, ±1.8e308, with three decimals.
      char buf[320];
      const auto r =
          std::to_chars(buf, buf + sizeof buf, f.double_value(), std::chars_format::fixed, 3);
      if (r.ec == std::errc()) out->append(buf, r.ptr);
      return;
    }
  }
}

void AppendField(std::string* out, const LogField& f, LogFormat format) {
  if (format == LogFormat::kText) {
    out->push_back(' ');
    out->append(f.key());
    out->push_back('=');
  } else {
    out->append(",\"");
    out->append(f.key());
    out->append("\":");
  }
  AppendValue(out, f, format);
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

bool ParseLogFormat(std::string_view text, LogFormat* out) {
  if (text == "json") {
    *out = LogFormat::kJson;
  } else if (text == "text") {
    *out = LogFormat::kText;
  } else {
    return false;
  }
  return true;
}

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (text == LogLevelName(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

void FormatLogLine(std::string* out, std::int64_t unix_nanos, LogLevel level, std::string_view msg,
                   std::initializer_list<LogField> fields, LogFormat format) {
  if (format == LogFormat::kText) {
    out->append("time=");
    AppendTime(out, unix_nanos);
    out->append(" level=");
    out->append(LogLevelName(level));
    out->append(" msg=");
    AppendString(out, msg);
    for (const LogField& f : fields) AppendField(out, f, format);
    out->push_back('\n');
    return;
  }
  out->append("{\"time\":\"");
  AppendTime(out, unix_nanos);
  out->append("\",\"level\":\"");
  out->append(LogLevelName(level));
  out->append("\",\"msg\":");
  AppendString(out, msg);
  for (const LogField& f : fields) AppendField(out, f, format);
  out->append("}\n");
}

void Logger::Log(LogLevel level, std::string_view msg,
                 std::initializer_list<LogField> fields) const {
  if (!Enabled(level)) return;
  try {
    // One buffer per thread, reused: formatting allocates only while it grows.
    thread_local std::string line;
    line.clear();
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    FormatLogLine(&line, static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec, level,
                  msg, fields, format_);
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  } catch (...) {
    // Out of memory while formatting: drop the line rather than the process.
  }
}

}  // namespace wasd::runtime
