#include "objects/quantity.h"

#include <limits>

namespace wasd::objects {

namespace {

// 128-bit intermediates: a 30-digit mantissa times 2^60 or 10^21 before the
// final division. __extension__ keeps -Wpedantic quiet about the GCC/Clang type.
__extension__ typedef __int128 Int128;  // NOLINT(modernize-use-using)

constexpr std::int64_t kMaxMilli = std::numeric_limits<std::int64_t>::max();
constexpr int kMaxDigits = 30;

Int128 Pow10(int n) {
  Int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Suffix → (binary exponent, decimal exponent); both 0 for no suffix.
struct Suffix {
  int pow2 = 0;
  int pow10 = 0;
};

std::optional<Suffix> ParseSuffix(std::string_view s) {
  // clang-format off
  if (s.empty()) return Suffix{};
  if (s == "Ki") return Suffix{10, 0};
  if (s == "Mi") return Suffix{20, 0};
  if (s == "Gi") return Suffix{30, 0};
  if (s == "Ti") return Suffix{40, 0};
  if (s == "Pi") return Suffix{50, 0};
  if (s == "Ei") return Suffix{60, 0};
  if (s == "n")  return Suffix{0, -9};
  if (s == "u")  return Suffix{0, -6};
  if (s == "m")  return Suffix{0, -3};
  if (s == "k")  return Suffix{0, 3};
  if (s == "M")  return Suffix{0, 6};
  if (s == "G")  return Suffix{0, 9};
  if (s == "T")  return Suffix{0, 12};
  if (s == "P")  return Suffix{0, 15};
  if (s == "E")  return Suffix{0, 18};
  // clang-format on
  // Decimal exponent: e or E, an optional sign, digits.
  if (s[0] != 'e' && s[0] != 'E') return std::nullopt;
  std::size_t i = 1;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i >= s.size() || s.size() - i > 3) return std::nullopt;
  int exp = 0;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return std::nullopt;
    exp = exp * 10 + (s[i] - '0');
  }
  return Suffix{0, negative ? -exp : exp};
}

// ceil(num / den) for num ≥ 0, den > 0.
Int128 CeilDiv(Int128 num, Int128 den) { return (num + den - 1) / den; }

}  // namespace

std::optional<std::int64_t> ParseQuantityMilli(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  Int128 digits = 0;
  int count = 0;
  int fraction = 0;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (!IsDigit(c)) break;
    if (++count > kMaxDigits) return std::nullopt;
    digits = digits * 10 + (c - '0');
    if (seen_point) ++fraction;
  }
  if (count == 0) return std::nullopt;
  const std::optional<Suffix> suffix = ParseSuffix(text.substr(i));
  if (!suffix) return std::nullopt;
  // value in milli = digits × 2^pow2 × 10^(pow10 + 3 − fraction)
  const int exp10 = suffix->pow10 + 3 - fraction;
  const Int128 limit = kMaxMilli;
  Int128 milli = 0;
  if (digits != 0) {
    Int128 num = digits;
    // Doubling stops being useful once the value cannot fit even after the
    // division by 10^-exp10 still to come (and before an Int128 overflows).
    const int divide = exp10 < 0 ? -exp10 : 0;
    const Int128 bound = divide <= 19 ? limit * Pow10(divide) : Pow10(38);
    for (int k = 0; k < suffix->pow2; ++k) {
      num *= 2;
      if (num > bound) return std::nullopt;
    }
    if (exp10 >= 0) {
      for (int k = 0; k < exp10; ++k) {
        num *= 10;
        if (num > limit) return std::nullopt;
      }
      milli = num;
    } else if (-exp10 > 38) {
      milli = 1;
    } else {
      milli = CeilDiv(num, Pow10(-exp10));
    }
    if (milli > limit) return std::nullopt;
  }
  const auto value = static_cast<std::int64_t>(milli);
  return negative ? -value : value;
}

std::string FormatQuantityMilli(std::string_view resource, std::int64_t milli) {
  if (milli % 1000 != 0) return std::to_string(milli) + "m";
  std::int64_t units = milli / 1000;
  const bool bytes = resource == "memory" || resource == "ephemeral-storage" ||
                     resource.substr(0, 10) == "hugepages-";
  if (!bytes || units == 0) return std::to_string(units);
  static constexpr const char* kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  int s = 0;
  while (s < 6 && units % 1024 == 0) {
    units /= 1024;
    ++s;
  }
  return std::to_string(units) + kSuffixes[s];
}

}  // namespace wasd::objects
