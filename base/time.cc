#include "base/time.h"

#include <charconv>

namespace wasd::base {

namespace {

using std::chrono::system_clock;

// Two decimal digits of `v` (0-99).
void PutTwoDigits(char* out, unsigned v) {
  out[0] = static_cast<char>('0' + v / 10);
  out[1] = static_cast<char>('0' + v % 10);
}

// The date-time in seconds and nanoseconds since the epoch, when `text`
// is one.
struct Parsed {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;  // 0..999'999'999
};

// `n` digits at `pos`, into *out.
bool Digits(std::string_view text, std::size_t pos, std::size_t n, int* out) {
  if (pos + n > text.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

std::optional<Parsed> Parse(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, 0, 4, &year) || text.size() < 20 || text[4] != '-' ||
      !Digits(text, 5, 2, &month) || text[7] != '-' || !Digits(text, 8, 2, &day) ||
      (text[10] != 'T' && text[10] != 't') || !Digits(text, 11, 2, &hour) || text[13] != ':' ||
      !Digits(text, 14, 2, &minute) || text[16] != ':' || !Digits(text, 17, 2, &second) ||
      hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (text[pos] == '.') {
    ++pos;
    const std::size_t start = pos;
    std::int64_t scale = 100'000'000;
    for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
      nanos += (text[pos] - '0') * scale;
      scale /= 10;
    }
    if (pos == start) return std::nullopt;
  }
  int offset = 0;
  if (pos + 1 == text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    offset = 0;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') &&
             text[pos + 3] == ':') {
    int oh = 0, om = 0;
    if (!Digits(text, pos + 1, 2, &oh) || !Digits(text, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  return Parsed{days * 86'400 + hour * 3600 + minute * 60 + second - offset, nanos};
}

}  // namespace

void AppendRfc3339(std::string* out, system_clock::time_point t, TimePrecision precision) {
  const auto micros = std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch());
  const auto days = std::chrono::floor<std::chrono::days>(micros);
  const std::chrono::year_month_day date{std::chrono::sys_days(days)};
  const auto day_micros = static_cast<std::uint64_t>((micros - days).count());
  const auto day_secs = static_cast<unsigned>(day_micros / 1'000'000);
  const int year = static_cast<int>(date.year());
  if (year >= 0 && year <= 9999) {
    const auto y = static_cast<unsigned>(year);
    char buf[4];
    PutTwoDigits(buf, y / 100);
    PutTwoDigits(buf + 2, y % 100);
    out->append(buf, 4);
  } else {
    char buf[16];
    const auto r = std::to_chars(buf, buf + sizeof buf, year);
    out->append(buf, r.ptr);
  }
  char buf[27];  // "-MM-DDTHH:MM:SS.uuuuuuZ"
  buf[0] = '-';
  PutTwoDigits(buf + 1, static_cast<unsigned>(date.month()));
  buf[3] = '-';
  PutTwoDigits(buf + 4, static_cast<unsigned>(date.day()));
  buf[6] = 'T';
  PutTwoDigits(buf + 7, day_secs / 3600);
  buf[9] = ':';
  PutTwoDigits(buf + 10, day_secs / 60 % 60);
  buf[12] = ':';
  PutTwoDigits(buf + 13, day_secs % 60);
  std::size_t n = 15;
  if (precision == TimePrecision::kMicros) {
    buf[n++] = '.';
    auto u = day_micros % 1'000'000;
    for (std::size_t i = n + 5; i + 1 > n; --i) {
      buf[i] = static_cast<char>('0' + u % 10);
      u /= 10;
    }
    n += 6;
  }
  buf[n++] = 'Z';
  out->append(buf, n);
}

std::string FormatRfc3339(system_clock::time_point t, TimePrecision precision) {
  std::string out;
  AppendRfc3339(&out, t, precision);
  return out;
}

std::optional<system_clock::time_point> ParseRfc3339(std::string_view text) {
  const std::optional<Parsed> p = Parse(text);
  if (!p) return std::nullopt;
  return system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(
      std::chrono::seconds(p->seconds) + std::chrono::nanoseconds(p->nanos)));
}

std::optional<std::int64_t> ParseRfc3339Seconds(std::string_view text) {
  const std::optional<Parsed> p = Parse(text);
  if (!p) return std::nullopt;
  return p->seconds;
}

}  // namespace wasd::base
