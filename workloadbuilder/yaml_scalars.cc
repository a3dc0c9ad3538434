#include "workloadbuilder/yaml_scalars.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "base/utf8.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

bool AllOf(std::string_view s, std::string_view allowed) {
  if (s.empty()) return false;
  for (char c : s) {
    if (allowed.find(c) == std::string_view::npos) return false;
  }
  return true;
}

constexpr std::string_view kDigits = "0123456789";
constexpr std::string_view kHexDigits = "0123456789abcdefABCDEF";

// Parses an integer in `digits` with base `base` and sign `negative`; false on
// overflow.
bool ParseInteger(const std::string& digits, int base, bool negative, json& out) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long u = std::strtoull(digits.c_str(), &end, base);
  if (errno != 0 || end == nullptr || *end != '\0') return false;
  constexpr unsigned long long kMaxPositive = 9223372036854775807ULL;
  if (negative) {
    if (u > kMaxPositive + 1) return false;
    out = u == kMaxPositive + 1 ? std::numeric_limits<std::int64_t>::min()
                                : -static_cast<std::int64_t>(u);
  } else if (u > kMaxPositive) {
    out = static_cast<std::uint64_t>(u);
  } else {
    out = static_cast<std::int64_t>(u);
  }
  return true;
}

// YAML 1.2 core-schema integer forms: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+.
bool ResolveInt(std::string_view s, json& out) {
  bool negative = false;
  std::string_view body = s;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (AllOf(body, kDigits)) return ParseInteger(std::string(body), 10, negative, out);
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x' && AllOf(s.substr(2), kHexDigits)) {
    return ParseInteger(std::string(s.substr(2)), 16, false, out);
  }
  if (s.size() > 2 && s[0] == '0' && s[1] == 'o' && AllOf(s.substr(2), "01234567")) {
    return ParseInteger(std::string(s.substr(2)), 8, false, out);
  }
  return false;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? — hand-written, no regex.
bool ResolveFloat(std::string_view s, json& out) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  std::size_t int_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
  std::size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != s.size()) return false;
  const std::string copy(s);
  out = std::strtod(copy.c_str(), nullptr);
  return true;
}

bool IsNullWord(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool ResolveBool(std::string_view s, json& out) {
  if (s == "true" || s == "True" || s == "TRUE") {
    out = true;
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    out = false;
    return true;
  }
  return false;
}

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// Short excerpts keep error messages bounded.
std::string Excerpt(std::string_view s) {
  constexpr std::size_t kMaxEcho = 40;
  return "'" +
         (s.size() > kMaxEcho ? base::OneLine(s.substr(0, kMaxEcho)) + "..." : base::OneLine(s)) +
         "'";
}

}  // namespace

std::string ResolveYamlScalar(const std::string& tag, const std::string& text, json& out) {
  if (!base::IsValidUtf8(text)) return "must be valid UTF-8";
  if (tag == "!" || tag == std::string(kTagPrefix) + "str") {
    out = text;
    return {};
  }
  if (tag == "?" || tag.empty()) {
    if (IsNullWord(text)) {
      out = nullptr;
    } else if (!ResolveBool(text, out) && !ResolveInt(text, out) && !ResolveFloat(text, out)) {
      out = text;
    }
    return {};
  }
  if (tag.rfind(kTagPrefix, 0) == 0) {
    const std::string_view kind = std::string_view(tag).substr(kTagPrefix.size());
    bool ok = false;
    if (kind == "int") ok = ResolveInt(text, out);
    if (kind == "float") ok = ResolveInt(text, out) || ResolveFloat(text, out);
    if (kind == "bool") ok = ResolveBool(text, out);
    if (kind == "null") {
      ok = IsNullWord(text);
      out = nullptr;
    }
    if (ok) return {};
    return "cannot read " + Excerpt(text) + " as !!" + std::string(kind);
  }
  return "unsupported YAML tag " + Excerpt(tag);
}

}  // namespace wasd::workloadbuilder
