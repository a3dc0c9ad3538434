#include "workloadbuilder/config_text.h"

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "workloadbuilder/json_util.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

bool IsBlank(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

bool IsValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    if (b < 0x80) {
      n = 1;
    } else if ((b & 0xE0) == 0xC0 && b >= 0xC2) {
      n = 2;
    } else if ((b & 0xF0) == 0xE0) {
      n = 3;
    } else if ((b & 0xF8) == 0xF0 && b <= 0xF4) {
      n = 4;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

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

class YamlConverter {
 public:
  // Converts `node` into `out`; false with error() set on any failure.
  bool Convert(const YAML::Node& node, int depth, json& out) {
    if (++values_ > kMaxYamlValues) {
      return Fail("expands to more than " + std::to_string(kMaxYamlValues) + " values");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out = nullptr;
        return true;
      case YAML::NodeType::Scalar:
        return ConvertScalar(node, out);
      case YAML::NodeType::Sequence:
        if (depth >= kMaxConfigDepth) return TooDeep();
        out = json::array();
        for (const YAML::Node& item : node) {
          json converted;
          if (!Convert(item, depth + 1, converted)) return false;
          out.push_back(std::move(converted));
        }
        return true;
      case YAML::NodeType::Map:
        if (depth >= kMaxConfigDepth) return TooDeep();
        out = json::object();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) return Fail("mapping keys must be strings");
          const std::string& key = kv.first.Scalar();
          if (!IsValidUtf8(key)) return Fail("must be valid UTF-8");
          json converted;
          if (!Convert(kv.second, depth + 1, converted)) return false;
          out[key] = std::move(converted);
        }
        return true;
    }
    return Fail("unsupported YAML node");
  }

  const std::string& error() const { return error_; }

 private:
  bool ConvertScalar(const YAML::Node& node, json& out) {
    const std::string& text = node.Scalar();
    if (!IsValidUtf8(text)) return Fail("must be valid UTF-8");
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == std::string(kTagPrefix) + "str") {
      out = text;
      return true;
    }
    if (tag == "?" || tag.empty()) {
      if (IsNullWord(text)) {
        out = nullptr;
      } else if (!ResolveBool(text, out) && !ResolveInt(text, out) && !ResolveFloat(text, out)) {
        out = text;
      }
      return true;
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
      if (ok) return true;
      return Fail("cannot read " + GoQuoteless(text) + " as !!" + std::string(kind));
    }
    return Fail("unsupported YAML tag " + GoQuoteless(tag));
  }

  // Short excerpts keep error messages bounded.
  static std::string GoQuoteless(const std::string& s) {
    constexpr std::size_t kMaxEcho = 40;
    return "'" + (s.size() > kMaxEcho ? s.substr(0, kMaxEcho) + "..." : s) + "'";
  }

  bool TooDeep() {
    return Fail("nests deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  }
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  int values_ = 0;
  std::string error_;
};

ParsedText ParseYaml(std::string_view text) {
  ParsedText result;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    if (docs.size() != 1) {
      result.error = "must hold exactly one YAML document";
      return result;
    }
    YamlConverter converter;
    if (!converter.Convert(docs.front(), 0, result.value)) {
      result.value = nullptr;
      result.error = converter.error();
    }
  } catch (const YAML::Exception& e) {
    result.value = nullptr;
    result.error = "not valid JSON or YAML: " + e.msg + " at line " +
                   std::to_string(e.mark.line + 1) + ", column " +
                   std::to_string(e.mark.column + 1);
  } catch (const std::exception&) {
    result.value = nullptr;
    result.error = "not valid JSON or YAML";
  }
  return result;
}

}  // namespace

ParsedText ParseConfigText(std::string_view text) {
  ParsedText result;
  if (IsBlank(text)) {
    result.error = "must not be empty";
    return result;
  }
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) {
    if (DepthExceeds(parsed, kMaxConfigDepth)) {
      result.error = "nests deeper than " + std::to_string(kMaxConfigDepth) + " levels";
      return result;
    }
    result.value = std::move(parsed);
    return result;
  }
  return ParseYaml(text);
}

}  // namespace wasd::workloadbuilder
