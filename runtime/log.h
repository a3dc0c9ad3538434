// Logger: the one structured log of every wasd command (webhook, reconciler,
// certs, selftest): one line per event on a file descriptor (stderr in
// production), keys in a fixed order — time, level, msg, then the fields in
// the order given, lowerCamelCase by convention. Two encodings
// (--log-format): json, one object per line ({"time","level","msg",…}), and
// text, logfmt-style (time=… level=… msg="…" key=value) for humans.
//
// Built for the request path: a line is formatted by hand into a
// thread-local buffer (no streams, no JSON library, no allocation once the
// buffer has grown) and handed to the kernel with a single write(2), so lines
// from different threads never interleave for lines up to PIPE_BUF (4 KiB);
// string values are cut at kMaxLogValueBytes to keep request lines below it.
//
// Thread-safe: Log() may be called from any thread; the Logger is immutable
// after construction.
#ifndef WASD_RUNTIME_LOG_H_
#define WASD_RUNTIME_LOG_H_

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/json_text.h"  // AppendJsonEscaped, which the lines are written with

namespace wasd::runtime {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kJson, kText };

// "debug", "info", "warn", "error".
std::string_view LogLevelName(LogLevel level);
// Parses a level name; false when unknown.
bool ParseLogLevel(std::string_view text, LogLevel* out);
// Parses "json" or "text"; false when unknown.
bool ParseLogFormat(std::string_view text, LogFormat* out);

// What the log flags of every command set (runtime/flags.h AddLogFlags):
// --log-level, --v (klog's verbosity: 1 or more means debug) and
// --log-format.
struct LogOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kJson;
};

// A string value longer than this is cut and marked with "…": a denial
// message listing many field errors must not push a request line past the
// 4 KiB that a pipe writes atomically.
inline constexpr std::size_t kMaxLogValueBytes = 1024;

// One key/value of a log line. Keys are written verbatim (callers pass
// literals); string values are JSON-escaped.
class LogField {
 public:
  enum class Kind { kString, kInt, kDouble, kBool, kJson };

  LogField(std::string_view key, std::string_view value)
      : key_(key), kind_(Kind::kString), string_(value) {}
  LogField(std::string_view key, const char* value)
      : key_(key), kind_(Kind::kString), string_(value) {}
  LogField(std::string_view key, const std::string& value)
      : key_(key), kind_(Kind::kString), string_(value) {}
  LogField(std::string_view key, bool value) : key_(key), kind_(Kind::kBool), bool_(value) {}
  LogField(std::string_view key, double value) : key_(key), kind_(Kind::kDouble), double_(value) {}
  // Any JSON value (an object, an array): written compact. `value` must
  // outlive the call.
  LogField(std::string_view key, const nlohmann::json& value)
      : key_(key), kind_(Kind::kJson), json_(&value) {}
  template <std::integral T>
  requires(!std::same_as<T, bool>) LogField(std::string_view key, T value)
      : key_(key), kind_(Kind::kInt), int_(static_cast<std::int64_t>(value)) {}

  std::string_view key() const { return key_; }
  Kind kind() const { return kind_; }
  std::string_view string_value() const { return string_; }
  std::int64_t int_value() const { return int_; }
  double double_value() const { return double_; }
  bool bool_value() const { return bool_; }
  const nlohmann::json& json_value() const { return *json_; }

 private:
  std::string_view key_;
  Kind kind_;
  std::string_view string_;
  std::int64_t int_ = 0;
  double double_ = 0;
  bool bool_ = false;
  const nlohmann::json* json_ = nullptr;
};

// Appends one complete log line (with the trailing newline) to `out`.
// `unix_nanos` is the wall-clock time; pure, for tests.
void FormatLogLine(std::string* out, std::int64_t unix_nanos, LogLevel level, std::string_view msg,
                   std::initializer_list<LogField> fields, LogFormat format = LogFormat::kJson);

class Logger {
 public:
  explicit Logger(LogLevel min_level = LogLevel::kInfo, int fd = 2,
                  LogFormat format = LogFormat::kJson)
      : min_level_(min_level), fd_(fd), format_(format) {}
  explicit Logger(const LogOptions& options, int fd = 2)
      : Logger(options.level, fd, options.format) {}

  bool Enabled(LogLevel level) const { return level >= min_level_; }

  // Writes one line if `level` is enabled. Never throws; a failed write is
  // dropped (there is nowhere else to report it).
  void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {}) const;

  void Debug(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kDebug, msg, fields);
  }
  void Info(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kError, msg, fields);
  }

 private:
  LogLevel min_level_;
  int fd_;
  LogFormat format_;
};

}  // namespace wasd::runtime

#endif  // WASD_RUNTIME_LOG_H_
