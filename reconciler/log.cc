#include "reconciler/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace wasd::reconciler {

namespace {

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

std::string NowRfc3339() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace

void Log::Write(Level level, std::string_view msg, const nlohmann::json& fields) const {
  if (level < min_level_) return;
  try {
    nlohmann::json line = nlohmann::json::object();
    line["time"] = NowRfc3339();
    line["level"] = LevelName(level);
    line["msg"] = msg;
    if (fields.is_object()) {
      for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = it.value();
    }
    std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > kMaxLogLineBytes) {
      nlohmann::json cut = {{"time", line["time"]},
                            {"level", line["level"]},
                            {"msg", std::string(msg.substr(0, 512))},
                            {"truncated", text.substr(0, kMaxLogLineBytes - 700)}};
      text = cut.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    text.push_back('\n');
    const ssize_t n = ::write(fd_, text.data(), text.size());
    (void)n;  // nowhere to report a failed log write
  } catch (...) {
    // A log line must never take the process down.
  }
}

}  // namespace wasd::reconciler
