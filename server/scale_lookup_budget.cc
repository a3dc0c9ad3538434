#include "server/scale_lookup_budget.h"

#include <cstddef>
#include <string>

namespace wasd::server {

namespace {

// The value of query parameter `key` in `query` (without the '?').
std::optional<std::string_view> QueryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

// Nanoseconds per unit of a Go duration; 0 when `unit` is none.
double UnitNanos(std::string_view unit) {
  if (unit == "h") return 3600e9;
  if (unit == "m") return 60e9;
  if (unit == "s") return 1e9;
  if (unit == "ms") return 1e6;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1e3;  // us, µs (two forms)
  if (unit == "ns") return 1;
  return 0;
}

}  // namespace

std::optional<std::chrono::nanoseconds> ParseRequestTimeout(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  const std::optional<std::string_view> value = QueryValue(target.substr(q + 1), "timeout");
  if (!value || value->empty() || value->size() > 64) return std::nullopt;
  std::string_view rest = *value;
  double total = 0;
  while (!rest.empty()) {
    // A number: digits with at most one '.'.
    std::size_t i = 0;
    bool dot = false;
    while (i < rest.size() && ((rest[i] >= '0' && rest[i] <= '9') || (rest[i] == '.' && !dot))) {
      dot = dot || rest[i] == '.';
      ++i;
    }
    if (i == 0 || (i == 1 && dot)) return std::nullopt;
    const double number = std::stod(std::string(rest.substr(0, i)));
    rest.remove_prefix(i);
    std::size_t u = 0;
    while (u < rest.size() && !(rest[u] >= '0' && rest[u] <= '9') && rest[u] != '.') ++u;
    const double per = UnitNanos(rest.substr(0, u));
    if (per == 0) return std::nullopt;
    total += number * per;
    rest.remove_prefix(u);
  }
  // Longer than a day is no webhook timeout (the API server caps it at 30 s).
  if (total <= 0 || total > 86400e9) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

}  // namespace wasd::server
