#include "certs/duration.h"

#include <cstdint>

namespace wasd::certs {
namespace {

constexpr std::int64_t kMaxSeconds = std::int64_t{100} * 366 * 24 * 3600;  // ~100 years

}  // namespace

bool ParseDuration(std::string_view text, std::chrono::seconds* out) {
  if (text.empty()) return false;
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t number = 0;
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      number = number * 10 + (text[i] - '0');
      if (number > kMaxSeconds) return false;
      ++i;
    }
    if (i == start || i == text.size()) return false;  // no digits, or no unit
    std::int64_t unit = 0;
    switch (text[i]) {
      case 'h': unit = 3600; break;
      case 'm': unit = 60; break;
      case 's': unit = 1; break;
      default: return false;
    }
    ++i;
    total += number * unit;
    if (total > kMaxSeconds) return false;
  }
  *out = std::chrono::seconds(total);
  return true;
}

std::string FormatDuration(std::chrono::seconds d) {
  std::int64_t s = d.count();
  if (s <= 0) return "0s";
  std::string out;
  if (s >= 3600) out += std::to_string(s / 3600) + "h";
  s %= 3600;
  if (s >= 60) out += std::to_string(s / 60) + "m";
  s %= 60;
  if (s > 0) out += std::to_string(s) + "s";
  return out;
}

}  // namespace wasd::certs
