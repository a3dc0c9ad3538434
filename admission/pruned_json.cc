#include "admission/pruned_json.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/utf8.h"

namespace wasd::admission {

namespace {

using nlohmann::json;

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHighBits = 0x8080808080808080ull;

// A byte a string may hold as it is: printable ASCII but the quote and the
// backslash. Everything else needs a closer look (escape, end, UTF-8, error).
constexpr bool IsPlain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// How many of the 8 bytes at `p` are plain before the first one that is not
// (8: all are). Strings are most of an object's bytes; testing a 64-bit word
// at a time with the usual "has a zero byte" bit tricks keeps the scan at a
// few instructions per 8 bytes. Each test flags the first matching byte
// exactly (wrong flags can only appear above it), so the lowest flag is the
// answer.
unsigned PlainPrefix8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  const std::uint64_t special = (((quote - kOnes) & ~quote)            // a '"'
                                 | ((backslash - kOnes) & ~backslash)  // a '\\'
                                 | ((w - kOnes * 0x20) & ~w)           // a byte < 0x20
                                 | w) &                                // a byte >= 0x80
                                kHighBits;
  if (special == 0) return 8;
  if constexpr (std::endian::native == std::endian::little) {
    return static_cast<unsigned>(std::countr_zero(special)) / 8;
  } else {
    unsigned n = 0;
    while (IsPlain(static_cast<unsigned char>(p[n]))) ++n;
    return n;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One pass over the text. Skip validates a value and moves past it; Build
// validates and builds it; Select walks an object building only the
// selected members. Recursion follows the nesting, which Enter() bounds by
// max_depth. Each returns false on the first error (status_ says which).
class Scanner {
 public:
  Scanner(std::string_view text, std::size_t max_depth)
      : p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {}

  PruneStatus Run(std::span<const Selection> root, json* out) {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;  // BOM
    SkipSpace();
    if (!Select(root, out)) return status_;
    SkipSpace();
    // nlohmann takes a NUL byte between tokens for the end of the input
    // (text after it is ignored); inside a value a NUL is an error anyway.
    return p_ == end_ || *p_ == '\0' ? PruneStatus::kOk : PruneStatus::kInvalid;
  }

 private:
  bool Invalid() { return false; }  // status_ stays kInvalid

  bool Enter() {  // at '{' or '['
    if (++depth_ > max_depth_) {
      status_ = PruneStatus::kTooDeep;
      return false;
    }
    ++p_;
    SkipSpace();
    return true;
  }
  bool Leave() {  // at '}' or ']'
    ++p_;
    --depth_;
    return true;
  }

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // Calls on_member(name) for each member of the object at p_, with p_ at
  // the member's value; on_member must consume the value. `name` is the
  // decoded member name when `names` is set, else empty.
  template <typename OnMember>
  bool Members(bool names, OnMember on_member) {
    if (!Enter()) return false;
    if (p_ < end_ && *p_ == '}') return Leave();
    std::string decoded;
    for (;;) {
      if (p_ == end_ || *p_ != '"') return Invalid();
      const char* begin = p_;
      bool escaped = false;
      if (!SkipString(&escaped)) return false;
      std::string_view name;
      if (names) {
        name = std::string_view(begin + 1, static_cast<std::size_t>(p_ - begin - 2));
        if (escaped) {  // rare in Kubernetes objects: let nlohmann decode it
          const json parsed = json::parse(begin, p_, nullptr, false);
          if (!parsed.is_string()) return Invalid();
          decoded = parsed.get<std::string>();
          name = decoded;
        }
      }
      SkipSpace();
      if (p_ == end_ || *p_ != ':') return Invalid();
      ++p_;
      SkipSpace();
      if (!on_member(name)) return false;
      SkipSpace();
      if (p_ == end_) return Invalid();
      if (*p_ == '}') return Leave();
      if (*p_ != ',') return Invalid();
      ++p_;
      SkipSpace();
    }
  }

  // Calls on_element() for each element of the array at p_.
  template <typename OnElement>
  bool Elements(OnElement on_element) {
    if (!Enter()) return false;
    if (p_ < end_ && *p_ == ']') return Leave();
    for (;;) {
      if (!on_element()) return false;
      SkipSpace();
      if (p_ == end_) return Invalid();
      if (*p_ == ']') return Leave();
      if (*p_ != ',') return Invalid();
      ++p_;
      SkipSpace();
    }
  }

  bool Skip() {
    if (p_ == end_) return Invalid();
    switch (*p_) {
      case '{': return Members(false, [this](std::string_view) { return Skip(); });
      case '[': return Elements([this] { return Skip(); });
      case '"': return SkipString(nullptr);
      case 't': return SkipLiteral("true");
      case 'f': return SkipLiteral("false");
      case 'n': return SkipLiteral("null");
      default: return Number(nullptr);
    }
  }

  bool Build(json* out) {
    if (p_ == end_) return Invalid();
    switch (*p_) {
      case '{':
        *out = json::object();
        return Members(true, [this, out](std::string_view name) {
          json& slot = (*out)[std::string(name)];
          slot = json();  // a repeated member: the last one wins
          return Build(&slot);
        });
      case '[':
        *out = json::array();
        return Elements([this, out] {
          out->push_back(json());
          return Build(&out->back());
        });
      case '"': {
        const char* begin = p_;
        bool escaped = false;
        if (!SkipString(&escaped)) return false;
        if (!escaped) {
          *out = std::string(begin + 1, p_ - 1);
          return true;
        }
        *out = json::parse(begin, p_, nullptr, false);  // nlohmann decodes escapes
        return !out->is_discarded();
      }
      case 't': *out = true; return SkipLiteral("true");
      case 'f': *out = false; return SkipLiteral("false");
      case 'n': *out = nullptr; return SkipLiteral("null");
      default: return Number(out);
    }
  }

  bool Select(std::span<const Selection> members, json* out) {
    if (p_ == end_ || *p_ != '{') return Build(out);
    *out = json::object();
    return Members(true, [this, members, out](std::string_view name) {
      for (const Selection& s : members) {
        const bool prefix = !s.key.empty() && s.key.back() == '*';
        if (prefix ? !name.starts_with(s.key.substr(0, s.key.size() - 1)) : s.key != name) continue;
        json& slot = (*out)[std::string(name)];
        slot = json();  // a repeated member: the last one wins
        return s.members.empty() ? Build(&slot) : Select(s.members, &slot);
      }
      return Skip();
    });
  }

  // At the opening quote. Sets *escaped when the string holds a '\'.
  bool SkipString(bool* escaped) {
    ++p_;
    for (;;) {
      while (end_ - p_ >= 8) {
        const unsigned n = PlainPrefix8(p_);
        p_ += n;
        if (n < 8) break;
      }
      while (p_ < end_ && IsPlain(static_cast<unsigned char>(*p_))) ++p_;
      if (p_ == end_) return Invalid();
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (escaped != nullptr) *escaped = true;
        if (!SkipEscape()) return Invalid();
      } else if (c < 0x20) {
        return Invalid();  // control characters must be escaped
      } else {
        const std::size_t n =
            base::Utf8SequenceLength(std::string_view(p_, static_cast<std::size_t>(end_ - p_)), 0);
        if (n == 0) return Invalid();
        p_ += n;
      }
    }
  }

  // The \uXXXX code unit at p_ (which is at the '\'), or -1.
  int CodeUnit() const {
    if (end_ - p_ < 6 || p_[1] != 'u') return -1;
    int v = 0;
    for (int i = 2; i < 6; ++i) {
      const int h = HexValue(p_[i]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    return v;
  }

  bool SkipEscape() {
    if (end_ - p_ < 2) return false;
    switch (p_[1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't': p_ += 2; return true;
      case 'u': break;
      default: return false;
    }
    const int unit = CodeUnit();
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;  // a lone low surrogate
    p_ += 6;
    if (unit < 0xD800 || unit > 0xDBFF) return true;
    const int low = CodeUnit();  // a high surrogate needs its low half next
    if (low < 0xDC00 || low > 0xDFFF) return false;
    p_ += 6;
    return true;
  }

  bool SkipDigits() {
    if (p_ == end_ || !IsDigit(*p_)) return Invalid();
    while (p_ < end_ && IsDigit(*p_)) ++p_;
    return true;
  }

  // Validates a number and, when `out` is set, stores it with the type
  // nlohmann gives it (unsigned, signed or float).
  bool Number(json* out) {
    const char* begin = p_;
    bool plain_integer = true;
    if (*p_ == '-') ++p_;
    if (p_ == end_) return Invalid();
    if (*p_ == '0') {
      ++p_;
    } else if (!IsDigit(*p_) || !SkipDigits()) {
      return Invalid();
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!SkipDigits()) return false;
      plain_integer = false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!SkipDigits()) return false;
      plain_integer = false;
    }
    // An integer of up to 18 digits fits int64 and uint64 alike; anything
    // else (fractions, exponents, long integers that may become floats,
    // non-finite values that nlohmann refuses) is rare: nlohmann decides.
    constexpr std::ptrdiff_t kShortInteger = 18;
    const std::ptrdiff_t digits = p_ - begin - (*begin == '-' ? 1 : 0);
    if (plain_integer && digits <= kShortInteger) {
      if (out == nullptr) return true;
      std::int64_t v = 0;
      for (const char* q = *begin == '-' ? begin + 1 : begin; q < p_; ++q) v = v * 10 + (*q - '0');
      if (*begin == '-') {
        *out = -v;
      } else {
        *out = static_cast<std::uint64_t>(v);
      }
      return true;
    }
    json value = json::parse(begin, p_, nullptr, false);
    if (value.is_discarded()) return Invalid();
    if (out != nullptr) *out = std::move(value);
    return true;
  }

  bool SkipLiteral(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::memcmp(p_, word.data(), word.size()) != 0) {
      return Invalid();
    }
    p_ += word.size();
    return true;
  }

  const char* p_;
  const char* end_;
  std::size_t depth_ = 0;
  const std::size_t max_depth_;
  PruneStatus status_ = PruneStatus::kInvalid;
};

}  // namespace

PruneStatus PrunedParse(std::string_view text, std::span<const Selection> root,
                        std::size_t max_depth, json* out) {
  return Scanner(text, max_depth).Run(root, out);
}

}  // namespace wasd::admission
