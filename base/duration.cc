#include "base/duration.h"

#include <cstdint>
#include <string>

namespace wasd::base {

namespace {

using std::chrono::nanoseconds;

Status Bad(std::string_view text, const std::string& why) {
  return Status::Error(Status::Kind::kInvalidArgument,
                       "invalid duration \"" + std::string(text) + "\": " + why);
}

// Nanoseconds per unit, or 0 for an unknown unit.
std::int64_t UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
    return 1'000;  // µ (U+00B5, U+03BC)
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return 1'000'000'000;
  if (unit == "m") return 60'000'000'000;
  if (unit == "h") return 3'600'000'000'000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<nanoseconds> ParseDuration(std::string_view text) {
  const std::string_view original = text;
  if (text.empty())
    return Bad(original, "empty; want a number with a unit such as 30s, 5m or 1h30m");
  bool negative = false;
  if (text.front() == '-' || text.front() == '+') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return nanoseconds(0);
  if (text.empty()) return Bad(original, "no number");
  // Each term is accumulated in long double: exact for every integer
  // nanosecond count below kMaxDuration (3.2e18 < 2^64), and a fraction such
  // as 1.5h is rounded once, at the end of its term.
  constexpr long double kLimit = static_cast<long double>(nanoseconds(kMaxDuration).count());
  long double total = 0;
  while (!text.empty()) {
    std::size_t i = 0;
    long double whole = 0;
    bool digits = false;
    while (i < text.size() && IsDigit(text[i])) {
      whole = whole * 10 + (text[i] - '0');
      if (whole > kLimit) return Bad(original, "too large (at most 876000h, 100 years)");
      digits = true;
      ++i;
    }
    long double fraction = 0;
    if (i < text.size() && text[i] == '.') {
      ++i;
      long double scale = 1;
      while (i < text.size() && IsDigit(text[i])) {
        if (scale > 1e-30L) {
          scale /= 10;
          fraction += (text[i] - '0') * scale;
        }
        digits = true;
        ++i;
      }
    }
    if (!digits) return Bad(original, "a unit without a number");
    std::size_t u = i;
    while (u < text.size() && !IsDigit(text[u]) && text[u] != '.') ++u;
    const std::string_view unit = text.substr(i, u - i);
    if (unit.empty()) {
      return Bad(
          original,
          "missing unit; write it with one such as 30s, 500ms, 5m or 1h (ns, us, ms, s, m, h)");
    }
    const std::int64_t per = UnitNanos(unit);
    if (per == 0)
      return Bad(original, "unknown unit \"" + std::string(unit) + "\" (ns, us, ms, s, m, h)");
    total += (whole + fraction) * static_cast<long double>(per);
    if (total > kLimit) return Bad(original, "too large (at most 876000h, 100 years)");
    text.remove_prefix(u);
  }
  const auto n = static_cast<std::int64_t>(total + 0.5L);
  return nanoseconds(negative ? -n : n);
}

namespace {

// Appends v / 10^prec with its trailing zeros (and a bare point) removed.
void AppendFixed(std::string* out, std::uint64_t v, int prec) {
  std::uint64_t div = 1;
  for (int i = 0; i < prec; ++i) div *= 10;
  *out += std::to_string(v / div);
  std::uint64_t frac = v % div;
  if (frac == 0) return;
  std::string digits = std::to_string(frac);
  digits.insert(0, static_cast<std::size_t>(prec) - digits.size(), '0');
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  *out += '.';
  *out += digits;
}

}  // namespace

std::string FormatDuration(nanoseconds d) {
  std::int64_t n = d.count();
  std::string out;
  if (n < 0) {
    out = "-";
    n = -n;
  }
  const auto u = static_cast<std::uint64_t>(n);
  if (u == 0) return "0s";
  if (u < 1'000) return out + std::to_string(u) + "ns";
  if (u < 1'000'000) {
    AppendFixed(&out, u, 3);
    return out + "\xC2\xB5s";
  }
  if (u < 1'000'000'000) {
    AppendFixed(&out, u, 6);
    return out + "ms";
  }
  const std::uint64_t hours = u / 3'600'000'000'000;
  const std::uint64_t minutes = (u / 60'000'000'000) % 60;
  const std::uint64_t sec_nanos = u % 60'000'000'000;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  AppendFixed(&out, sec_nanos, 9);
  return out + "s";
}

Result<bool> ParseBool(std::string_view text) {
  if (text == "1" || text == "t" || text == "T" || text == "TRUE" || text == "true" ||
      text == "True") {
    return true;
  }
  if (text == "0" || text == "f" || text == "F" || text == "FALSE" || text == "false" ||
      text == "False") {
    return false;
  }
  return Status::Error(Status::Kind::kInvalidArgument,
                       "invalid boolean \"" + std::string(text) + "\": want true or false");
}

}  // namespace wasd::base
