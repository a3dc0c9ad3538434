#include "base/log.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/utf8.h"

namespace wasd::base {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Two decimal digits of `v` (0–99).
void AppendTwoDigits(char* out, unsigned v) {
  out[0] = static_cast<char>('0' + v / 10);
  out[1] = static_cast<char>('0' + v % 10);
}

// RFC 3339 UTC with microseconds, e.g. 2026-01-02T03:04:05.000006Z. From
// 1970 on (every time an int64 of nanoseconds holds after it, up to 2262)
// written digit by digit from <chrono>'s civil date, without gmtime_r and
// snprintf; earlier times go through them as they always did.
void AppendTime(std::string* out, std::int64_t unix_nanos) {
  const std::time_t secs = static_cast<std::time_t>(unix_nanos / 1'000'000'000);
  const long micros = static_cast<long>((unix_nanos % 1'000'000'000) / 1000);
  if (unix_nanos >= 0) {
    const std::int64_t days = secs / 86'400;
    const auto day_secs = static_cast<unsigned>(secs % 86'400);
    const std::chrono::year_month_day date{
        std::chrono::sys_days{std::chrono::days{static_cast<int>(days)}}};
    const auto year = static_cast<unsigned>(static_cast<int>(date.year()));
    char buf[27];  // "YYYY-MM-DDTHH:MM:SS.uuuuuuZ"
    AppendTwoDigits(buf, year / 100);
    AppendTwoDigits(buf + 2, year % 100);
    buf[4] = '-';
    AppendTwoDigits(buf + 5, static_cast<unsigned>(date.month()));
    buf[7] = '-';
    AppendTwoDigits(buf + 8, static_cast<unsigned>(date.day()));
    buf[10] = 'T';
    AppendTwoDigits(buf + 11, day_secs / 3600);
    buf[13] = ':';
    AppendTwoDigits(buf + 14, day_secs / 60 % 60);
    buf[16] = ':';
    AppendTwoDigits(buf + 17, day_secs % 60);
    buf[19] = '.';
    auto u = static_cast<unsigned long>(micros);
    for (int i = 25; i >= 20; --i) {
      buf[i] = static_cast<char>('0' + u % 10);
      u /= 10;
    }
    buf[26] = 'Z';
    out->append(buf, sizeof buf);
    return;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const int n =
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
  if (n > 0) out->append(buf, static_cast<std::size_t>(n));
}

void AppendString(std::string* out, std::string_view value) {
  out->push_back('"');
  if (value.size() > kMaxLogValueBytes) {
    AppendJsonEscaped(out, value.substr(0, kMaxLogValueBytes));
    out->append("\xE2\x80\xA6");  // "…"
  } else {
    AppendJsonEscaped(out, value);
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

void AppendJsonEscaped(std::string* out, std::string_view value) {
  std::size_t i = 0;
  while (i < value.size()) {
    // A run of printable ASCII other than '"' and '\\' goes in one append.
    std::size_t run = i;
    while (run < value.size()) {
      const auto c = static_cast<unsigned char>(value[run]);
      if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') break;
      ++run;
    }
    if (run > i) {
      out->append(value.data() + i, run - i);
      i = run;
      if (i == value.size()) break;
    }
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x80) {
      const std::size_t len = Utf8SequenceLength(value, i);
      if (len == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(value.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default: {
        const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out->append(esc, sizeof esc);
      }
    }
    ++i;
  }
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

}  // namespace wasd::base
