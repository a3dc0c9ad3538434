#include "workloadbuilder/config_text.h"

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>
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

// The length of the well-formed UTF-8 sequence starting at s[i], or 0 when
// there is none. Well-formed as RFC 3629 defines it (the check
// nlohmann::json's serialiser applies): no overlong forms, no UTF-16
// surrogates (U+D800–DFFF, which a YAML "\ud800" escape produces), nothing
// above U+10FFFF.
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b < 0x80) {
    return 1;
  } else if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) lo = 0xA0;  // overlong
    if (b == 0xED) hi = 0x9F;  // surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) lo = 0x90;  // overlong
    if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (c < lo || c > hi) : (c & 0xC0) != 0x80) return 0;
  }
  return n;
}

// A value that passes can always be dumped to JSON for the API server.
bool IsValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Error messages are one line of valid UTF-8, but yaml-cpp's quote the
// offending input byte (e.g. "unknown escape character: " and a raw newline)
// and ours echo scalars: control bytes and bytes outside well-formed UTF-8
// are written as \xNN.
std::string OneLine(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const std::size_t n = Utf8SequenceLength(text, i);
    if (n == 0 || b < 0x20 || b == 0x7f) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
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
    return "'" + (s.size() > kMaxEcho ? OneLine(s.substr(0, kMaxEcho)) + "..." : OneLine(s)) + "'";
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

// Ignores every parse event: used to count documents without building nodes.
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The number of documents in `text`, counting no further than `limit`.
// Not YAML::LoadAll: on some malformed input (e.g. ",21[ , 3]") yaml-cpp 0.7
// reports one empty document after another without consuming anything, and
// LoadAll loops forever — a hang any user could trigger with an annotation.
int CountDocuments(const std::string& text, int limit) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  IgnoreEvents ignore;
  int n = 0;
  while (n < limit && parser.HandleNextDocument(ignore)) ++n;
  return n;
}

ParsedText ParseYaml(std::string_view text) {
  ParsedText result;
  try {
    const std::string copy(text);
    if (CountDocuments(copy, 2) != 1) {
      result.error = "must hold exactly one YAML document";
      return result;
    }
    const YAML::Node doc = YAML::Load(copy);
    YamlConverter converter;
    if (!converter.Convert(doc, 0, result.value)) {
      result.value = nullptr;
      result.error = converter.error();
    }
  } catch (const YAML::Exception& e) {
    result.value = nullptr;
    result.error = "not valid JSON or YAML: " + OneLine(e.msg) + " at line " +
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
