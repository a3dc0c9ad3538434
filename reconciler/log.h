// Log: the reconciler's structured log — one JSON object per line
// ({"time","level","msg", …fields}) written with a single write(2) so lines
// from worker threads never interleave. Lines are cut at kMaxLogLineBytes.
//
// Thread-safe: Log() may be called from any thread; immutable after
// construction.
#ifndef WASD_RECONCILER_LOG_H_
#define WASD_RECONCILER_LOG_H_

#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::reconciler {

// Keeps a line within what a pipe writes atomically (PIPE_BUF is 4 KiB); a
// longer message (a whole object dump) is truncated and marked.
inline constexpr std::size_t kMaxLogLineBytes = 4000;

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

class Log {
 public:
  explicit Log(Level min_level = Level::kInfo, int fd = 2) : min_level_(min_level), fd_(fd) {}

  // `fields` must be a JSON object (or null for none). Never throws.
  void Write(Level level, std::string_view msg, const nlohmann::json& fields = nullptr) const;
  void Debug(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Write(Level::kDebug, msg, fields);
  }
  void Info(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Write(Level::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Write(Level::kWarn, msg, fields);
  }
  void Error(std::string_view msg, const nlohmann::json& fields = nullptr) const {
    Write(Level::kError, msg, fields);
  }

 private:
  Level min_level_;
  int fd_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_LOG_H_
