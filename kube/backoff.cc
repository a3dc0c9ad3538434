#include "kube/backoff.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <random>
#include <string>

namespace wasd::kube {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int attempt, double random01) {
  const double max_ms = static_cast<double>(std::max<std::int64_t>(policy.max.count(), 0));
  double base = static_cast<double>(std::max<std::int64_t>(policy.initial.count(), 0));
  const double factor = std::max(policy.factor, 1.0);
  // Multiply step by step so a large attempt saturates at max instead of
  // overflowing a pow().
  for (int i = 0; i < attempt && base < max_ms; ++i) base *= factor;
  base = std::min(base, max_ms);
  const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  const double r = std::clamp(random01, 0.0, 1.0);
  const double delay = base - base * jitter * r;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::max(delay, 0.0)));
}

double Random01() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
}

bool SleepUnlessStopped(std::chrono::milliseconds d, const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> lock(mu);
  cv.wait_for(lock, stop, d, [] { return false; });
  return !stop.stop_requested();
}

namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Parses "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate) to seconds since the epoch.
std::optional<std::time_t> ParseImfFixdate(std::string_view v) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // "Www, DD Mon YYYY HH:MM:SS GMT" is exactly 29 characters.
  if (v.size() != 29 || v.substr(3, 2) != ", " || v[7] != ' ' || v[11] != ' ' || v[16] != ' ' ||
      v[19] != ':' || v[22] != ':' || v.substr(25) != " GMT") {
    return std::nullopt;
  }
  auto num = [&](std::size_t pos, std::size_t len) -> int {
    std::string_view d = v.substr(pos, len);
    if (!AllDigits(d)) return -1;
    return std::stoi(std::string(d));
  };
  std::tm tm{};
  tm.tm_mday = num(5, 2);
  tm.tm_year = num(12, 4);
  tm.tm_hour = num(17, 2);
  tm.tm_min = num(20, 2);
  tm.tm_sec = num(23, 2);
  int month = -1;
  for (int i = 0; i < 12; ++i) {
    if (v.substr(8, 3) == kMonths[i]) month = i;
  }
  if (month < 0 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_year < 1970 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0) {
    return std::nullopt;
  }
  tm.tm_mon = month;
  tm.tm_year -= 1900;
  return timegm(&tm);
}

}  // namespace

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value,
                                                    std::chrono::system_clock::time_point now,
                                                    std::chrono::seconds max) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) {
    value.remove_prefix(1);
  }
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
    value.remove_suffix(1);
  }
  if (AllDigits(value)) {
    // More than 9 digits is more than 30 years; clamp without overflowing.
    if (value.size() > 9) return max;
    return std::min(std::chrono::seconds(std::stoll(std::string(value))), max);
  }
  std::optional<std::time_t> at = ParseImfFixdate(value);
  if (!at) return std::nullopt;
  const auto when = std::chrono::system_clock::from_time_t(*at);
  if (when <= now) return std::chrono::seconds(0);
  auto delta = std::chrono::duration_cast<std::chrono::seconds>(when - now);
  return std::min(delta, max);
}

}  // namespace wasd::kube
