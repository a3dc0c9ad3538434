#include "base/json_projection.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/utf8.h"

namespace wasd::base {

// A member name on a path, compiled: what is kept of the value there.
struct JsonProjection::Node {
  bool keep_all = false;  // the whole value from here down
  // Exact member names, and name patterns by their prefix ("*": ""), the
  // longest prefix first.
  std::vector<std::pair<std::string, std::shared_ptr<const Node>>> members;
  std::vector<std::pair<std::string, std::shared_ptr<const Node>>> patterns;
  // "name[key=value]": as an array's node, the elements kept (key, value).
  std::optional<std::pair<std::string, std::string>> where;

  // The node of member `name`, or null when it is not kept.
  const Node* Find(std::string_view name) const {
    for (const auto& [key, child] : members) {
      if (key == name) return child.get();
    }
    for (const auto& [prefix, child] : patterns) {
      if (name.starts_with(prefix)) return child.get();
    }
    return nullptr;
  }
};

namespace {

using nlohmann::json;
using Node = JsonProjection::Node;

const Node& KeepAll() {
  static const Node node = [] {
    Node n;
    n.keep_all = true;
    return n;
  }();
  return node;
}

std::shared_ptr<const Node> KeepAllShared() {
  static const std::shared_ptr<const Node> node(std::shared_ptr<const Node>{}, &KeepAll());
  return node;
}

// True when `element` is kept by `node`'s "[key=value]" (or it has none).
bool Selected(const Node& node, const json& element) {
  if (!node.where) return true;
  if (!element.is_object()) return false;
  const auto it = element.find(node.where->first);
  return it != element.end() && it->is_string() &&
         it->get_ref<const std::string&>() == node.where->second;
}

// Builds the tree of a read set; an ended path wins over longer ones
// through it.
struct Builder {
  struct MNode {
    bool keep_all = false;
    std::map<std::string, MNode, std::less<>> members;
    std::optional<std::pair<std::string, std::string>> where;
  };
  MNode root;

  // "name[key=value]" -> name, and (key, value) into `where`.
  static std::string Split(const std::string& member,
                           std::optional<std::pair<std::string, std::string>>* where) {
    const auto open = member.find('[');
    const auto eq = member.find('=', open);
    if (open == std::string::npos || eq == std::string::npos || member.back() != ']') {
      return member;
    }
    *where = std::make_pair(member.substr(open + 1, eq - open - 1),
                            member.substr(eq + 1, member.size() - eq - 2));
    return member.substr(0, open);
  }

  void Add(const JsonPath& path) {
    MNode* n = &root;
    for (const std::string& member : path) {
      if (n->keep_all) return;
      std::optional<std::pair<std::string, std::string>> where;
      const std::string key = Split(member, &where);
      n = &n->members[key];
      if (where) n->where = std::move(where);
    }
    n->keep_all = true;
    n->members.clear();
  }

  static std::shared_ptr<const Node> Freeze(const MNode& m) {
    if (m.keep_all && !m.where) return KeepAllShared();
    auto n = std::make_shared<Node>();
    n->keep_all = m.keep_all;
    n->where = m.where;
    for (const auto& [key, child] : m.members) {
      if (!key.empty() && key.back() == '*') {
        n->patterns.emplace_back(key.substr(0, key.size() - 1), Freeze(child));
      } else {
        n->members.emplace_back(key, Freeze(child));
      }
    }
    std::stable_sort(n->patterns.begin(), n->patterns.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    return n;
  }
};

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHighBits = 0x8080808080808080ull;

// A byte a string may hold as it is: printable ASCII but the quote and the
// backslash. Everything else needs a closer look (escape, end, UTF-8, error).
constexpr bool IsPlain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Moves `p` past whitespace. The API server sends compact JSON, so the usual
// answer is one compare: every byte that may follow is above ' '.
[[gnu::always_inline]] inline void SkipSpaceAt(const char*& p, const char* end) {
  if (p < end && static_cast<unsigned char>(*p) <= ' ') {
    while (p < end && IsSpace(*p)) ++p;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// How many of the 8 bytes at `p` are plain before the first one that is not
// (8: all are), with the usual "has a zero byte" bit tricks on a 64-bit
// word. Each test flags the first matching byte exactly (wrong flags can
// only appear above it), so the lowest flag is the answer.
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

// The first byte at or after `p` that is not plain, or `end`. Strings are
// most of an object's bytes, so this is the scan's inner loop: 16 bytes at a
// time with SSE2 (part of x86-64), then 8 with the word tricks, then bytes.
const char* PlainRun(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // A signed compare: bytes >= 0x80 are negative, so "< 0x20" flags both
    // control characters and the bytes of UTF-8 sequences.
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                     _mm_cmplt_epi8(x, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return p + std::countr_zero(mask);
    p += 16;
  }
#endif
  while (end - p >= 8) {
    const unsigned n = PlainPrefix8(p);
    if (n < 8) return p + n;
    p += 8;
  }
  while (p < end && IsPlain(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// True when the text at `p` starts with `word` (a literal: the compare of a
// constant length compiles to a few instructions, no call).
template <std::size_t N>
bool IsLiteral(const char* p, const char* end, const char (&word)[N]) {
  return static_cast<std::size_t>(end - p) >= N - 1 && std::memcmp(p, word, N - 1) == 0;
}

// The \uXXXX code unit at `p` (which is at the '\'), or -1.
int CodeUnit(const char* p, const char* end) {
  if (end - p < 6 || p[1] != 'u') return -1;
  int v = 0;
  for (int i = 2; i < 6; ++i) {
    const int h = HexValue(p[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

// The escape at `p` (at the '\') checked as nlohmann checks it: one of
// \" \\ \/ \b \f \n \r \t, or \uXXXX with surrogates paired. Returns what
// follows it, or null.
const char* SkipEscape(const char* p, const char* end) {
  if (end - p < 2) return nullptr;
  switch (p[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': return p + 2;
    case 'u': break;
    default: return nullptr;
  }
  const int unit = CodeUnit(p, end);
  if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return nullptr;  // a lone low surrogate
  p += 6;
  if (unit < 0xD800 || unit > 0xDBFF) return p;
  const int low = CodeUnit(p, end);  // a high surrogate needs its low half next
  if (low < 0xDC00 || low > 0xDFFF) return nullptr;
  return p + 6;
}

// The string whose opening quote is at `p`: returns what follows its closing
// quote, or null when it is not a valid JSON string. Sets *escaped when it
// holds a '\'.
// Inlined into its callers: it runs once per string of the body.
[[gnu::always_inline]] inline const char* ScanString(const char* p, const char* end,
                                                     bool* escaped) {
  ++p;
  for (;;) {
    p = PlainRun(p, end);
    if (p == end) return nullptr;
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') return p + 1;
    if (c == '\\') {
      *escaped = true;
      if (end - p >= 2 && (p[1] == '"' || p[1] == '\\')) {  // most escapes in a review
        p += 2;
        continue;
      }
      p = SkipEscape(p, end);
      if (p == nullptr) return nullptr;
    } else if (c < 0x20) {
      return nullptr;  // control characters must be escaped
    } else {
      const std::size_t n =
          Utf8SequenceLength(std::string_view(p, static_cast<std::size_t>(end - p)), 0);
      if (n == 0) return nullptr;
      p += n;
    }
  }
}

void AppendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The text of the string between `begin` and `end` (its quotes excluded),
// which ScanString has accepted, with its escapes decoded as nlohmann
// decodes them: \uXXXX (a surrogate pair as one code point) in UTF-8.
std::string Unescape(const char* begin, const char* end) {
  std::string out;
  out.reserve(static_cast<std::size_t>(end - begin));
  const char* p = begin;
  while (p < end) {
    const auto* slash =
        static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (slash == nullptr) {
      out.append(p, end);
      break;
    }
    out.append(p, slash);
    p = slash;
    const char c = p[1];
    p += 2;
    switch (c) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        std::uint32_t cp = static_cast<std::uint32_t>(CodeUnit(p - 2, end));
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // paired: ScanString checked the low half
          const auto low = static_cast<std::uint32_t>(CodeUnit(p, end));
          p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        AppendUtf8(out, cp);
        break;
      }
      default: out += c;  // '"', '\\', '/'
    }
  }
  return out;
}

// Up to this many levels of one skipped value are tracked in a fixed
// stack (left uninitialized: each level is written before it is read); a
// deeper limit (max_depth) gets a heap one.
constexpr std::size_t kInlineSkipDepth = JsonProjection::kDefaultMaxDepth;

// One pass over the text. Skip validates a value and moves past it; Build
// validates and builds it; Value, Object and Array walk a value building only
// what a projection node keeps. Build and the walk recurse with the nesting,
// which Enter() bounds by max_depth; Skip keeps its own stack. Each returns false on the
// first error (status_ says which).
class Scanner {
 public:
  Scanner(std::string_view text, std::size_t max_depth)
      : p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {
    if (max_depth_ > kInlineSkipDepth) {
      heap_kinds_.resize(max_depth_);
      kinds_ = heap_kinds_.data();
    }
  }

  // JsonProjection::Parse: the root projected by `root`.
  PruneStatus Run(const Node& root, json* out) {
    return Document([&] { return Value(root, out); });
  }

  // ParseJsonWithin: the whole document, at most `max_values` values and
  // no repeated key.
  PruneStatus RunWhole(std::size_t max_values, json* out) {
    max_values_ = max_values;
    refuse_repeated_keys_ = true;
    return Document([&] { return Build(out); });
  }

 private:
  template <typename ReadRoot>
  PruneStatus Document(ReadRoot read_root) {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;  // BOM
    SkipSpace();
    if (!read_root()) return status_;
    SkipSpace();
    // nlohmann takes a NUL byte between tokens for the end of the input
    // (text after it is ignored); inside a value a NUL is an error anyway.
    return p_ == end_ || *p_ == '\0' ? PruneStatus::kOk : PruneStatus::kInvalid;
  }

  bool Invalid() { return false; }  // status_ stays kInvalid

  bool Refuse(PruneStatus why) {
    status_ = why;
    return false;
  }
  bool TooDeep() { return Refuse(PruneStatus::kTooDeep); }

  bool Enter() {  // at '{' or '['
    if (++depth_ > max_depth_) return TooDeep();
    ++p_;
    SkipSpace();
    return true;
  }
  bool Leave() {  // at '}' or ']'
    ++p_;
    --depth_;
    return true;
  }

  [[gnu::always_inline]] void SkipSpace() { SkipSpaceAt(p_, end_); }

  // Calls on_member(name) for each member of the object at p_, with p_ at
  // the member's value; on_member must consume the value. `name` is the
  // decoded member name.
  template <typename OnMember>
  bool Members(OnMember on_member) {
    if (!Enter()) return false;
    if (p_ < end_ && *p_ == '}') return Leave();
    std::string decoded;
    for (;;) {
      if (p_ == end_ || *p_ != '"') return Invalid();
      const char* begin = p_ + 1;
      bool escaped = false;
      p_ = ScanString(p_, end_, &escaped);
      if (p_ == nullptr) return Invalid();
      std::string_view name(begin, static_cast<std::size_t>(p_ - 1 - begin));
      if (escaped) {  // rare in Kubernetes objects
        decoded = Unescape(begin, p_ - 1);
        name = decoded;
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

  // Validates the value at p_ and moves past it, building nothing. Most of
  // a review is skipped, so this is one loop over local state rather than a
  // call per value: `open` counts the arrays and objects entered, and
  // kinds_[i] says whether level i is an object.
  bool Skip() {
    const char* p = p_;
    const char* const end = end_;
    std::size_t open = 0;
    const std::size_t room = max_depth_ - depth_;  // levels that may still be entered
    bool escaped = false;
    const auto in_object = [this](std::size_t level) { return kinds_[level] != 0; };
  value:
    if (p == end) return Invalid();
    switch (*p) {
      case '{':
      case '[': {
        if (open == room) {
          p_ = p;
          return TooDeep();
        }
        const bool object = *p == '{';
        kinds_[open] = object ? 1 : 0;
        ++open;
        ++p;
        SkipSpaceAt(p, end);
        if (p < end && *p == (object ? '}' : ']')) {
          ++p;
          --open;
          goto after_value;
        }
        if (object) goto member;
        goto value;
      }
      case '"':
        p = ScanString(p, end, &escaped);
        if (p == nullptr) return Invalid();
        goto after_value;
      case 't':
        if (!IsLiteral(p, end, "true")) return Invalid();
        p += 4;
        goto after_value;
      case 'f':
        if (!IsLiteral(p, end, "false")) return Invalid();
        p += 5;
        goto after_value;
      case 'n':
        if (!IsLiteral(p, end, "null")) return Invalid();
        p += 4;
        goto after_value;
      default:
        p_ = p;
        if (!Number(nullptr)) return false;
        p = p_;
        goto after_value;
    }
  member:  // at the name of a member
    if (p == end || *p != '"') return Invalid();
    p = ScanString(p, end, &escaped);
    if (p == nullptr) return Invalid();
    SkipSpaceAt(p, end);
    if (p == end || *p != ':') return Invalid();
    ++p;
    SkipSpaceAt(p, end);
    goto value;
  after_value:
    if (open == 0) {
      p_ = p;
      return true;
    }
    SkipSpaceAt(p, end);
    if (p == end) return Invalid();
    if (*p == ',') {
      ++p;
      SkipSpaceAt(p, end);
      if (in_object(open - 1)) goto member;
      goto value;
    }
    if (*p != (in_object(open - 1) ? '}' : ']')) return Invalid();
    ++p;
    --open;
    goto after_value;
  }

  bool Build(json* out) {
    if (p_ == end_) return Invalid();
    if (++values_ > max_values_) return Refuse(PruneStatus::kTooManyValues);
    switch (*p_) {
      case '{':
        *out = json::object();
        return Members([this, out](std::string_view name) {
          auto [it, inserted] = out->get_ref<json::object_t&>().try_emplace(std::string(name));
          if (!inserted) {
            if (refuse_repeated_keys_) return Refuse(PruneStatus::kDuplicateKey);
            it->second = json();  // a repeated member: the last one wins
          }
          return Build(&it->second);
        });
      case '[':
        *out = json::array();
        return Elements([this, out] {
          out->push_back(json());
          return Build(&out->back());
        });
      case '"': {
        const char* begin = p_ + 1;
        bool escaped = false;
        p_ = ScanString(p_, end_, &escaped);
        if (p_ == nullptr) return Invalid();
        *out = escaped ? Unescape(begin, p_ - 1) : std::string(begin, p_ - 1);
        return true;
      }
      case 't': *out = true; return SkipLiteral("true");
      case 'f': *out = false; return SkipLiteral("false");
      case 'n': *out = nullptr; return SkipLiteral("null");
      default: return Number(out);
    }
  }

  // The value at p_, projected by `n`.
  bool Value(const Node& n, json* out) {
    if (p_ == end_) return Invalid();
    if (*p_ == '[' && n.where) return FilteredArray(n, out);
    if (n.keep_all) return Build(out);
    if (*p_ == '{') return Object(n, out, false);
    if (*p_ == '[') {  // transparent: each element projected by `n`
      *out = json::array();
      auto& elements = out->get_ref<json::array_t&>();
      return Elements([this, &n, &elements] {
        elements.emplace_back();
        return Value(n, &elements.back());
      });
    }
    return Build(out);  // a scalar is kept as it is
  }

  // The object at p_ with the members `n` keeps; as an element of a
  // "[key=value]" array (`filtered`), with the member `key` too.
  bool Object(const Node& n, json* out, bool filtered) {
    *out = json::object();
    return Members([this, &n, out, filtered](std::string_view name) {
      const Node* child = n.Find(name);
      if (child == nullptr && filtered && name == n.where->first) child = &KeepAll();
      if (child == nullptr) return Skip();
      json& slot = (*out)[std::string(name)];
      slot = json();  // a repeated member: the last one wins
      return Value(*child, &slot);
    });
  }

  // The array at p_ of a "[key=value]" node: the object elements whose
  // `key` is `value`, each projected by `n` (the member `key` dropped again
  // unless `n` keeps it); other elements are skipped.
  bool FilteredArray(const Node& n, json* out) {
    *out = json::array();
    auto& elements = out->get_ref<json::array_t&>();
    const std::string& key = n.where->first;
    const bool keeps_key = n.keep_all || n.Find(key) != nullptr;
    return Elements([this, &n, &elements, &key, keeps_key] {
      if (p_ == end_ || *p_ != '{') return Skip();
      json element;
      if (!(n.keep_all ? Build(&element) : Object(n, &element, true))) return false;
      if (!Selected(n, element)) return true;
      if (!keeps_key) element.erase(key);
      elements.push_back(std::move(element));
      return true;
    });
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
  std::size_t values_ = 0;  // built so far
  std::size_t max_values_ = std::numeric_limits<std::size_t>::max();
  bool refuse_repeated_keys_ = false;
  PruneStatus status_ = PruneStatus::kInvalid;
  // Skip's stack: 1 where the level is an object, 0 an array.
  std::array<unsigned char, kInlineSkipDepth> inline_kinds_;
  std::vector<unsigned char> heap_kinds_;
  unsigned char* kinds_ = inline_kinds_.data();
};

json ProjectValue(const json& v, const Node& node) {
  if (v.is_array() && node.where) {
    json out = json::array();
    for (const json& e : v) {
      // (the member `key` is dropped again by the projection unless kept)
      if (Selected(node, e)) out.push_back(node.keep_all ? e : ProjectValue(e, node));
    }
    return out;
  }
  if (node.keep_all) return v;
  if (v.is_array()) {
    json out = json::array();
    for (const json& e : v) out.push_back(ProjectValue(e, node));
    return out;
  }
  if (!v.is_object()) return v;
  json out = json::object();
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (const Node* child = node.Find(it.key()); child != nullptr) {
      out[it.key()] = ProjectValue(*it, *child);
    }
  }
  return out;
}

}  // namespace

JsonPaths PathsUnder(const JsonPath& prefix, const JsonPaths& paths) {
  JsonPaths out;
  out.reserve(paths.size());
  for (const JsonPath& path : paths) {
    JsonPath& p = out.emplace_back(prefix);
    p.insert(p.end(), path.begin(), path.end());
  }
  return out;
}

void AppendPaths(JsonPaths* to, const JsonPaths& more) {
  to->insert(to->end(), more.begin(), more.end());
}

JsonProjection::JsonProjection() : root_(KeepAllShared()) {}

JsonProjection::JsonProjection(const JsonPaths& paths) {
  Builder b;
  for (const JsonPath& path : paths) b.Add(path);
  root_ = Builder::Freeze(b.root);
}

JsonProjection JsonProjection::Under(const std::string& projected,
                                     const std::vector<std::string>& kept_whole) const {
  auto n = std::make_shared<Node>();
  n->members.emplace_back(projected, root_);
  for (const std::string& key : kept_whole) n->members.emplace_back(key, KeepAllShared());
  return JsonProjection(std::shared_ptr<const Node>(std::move(n)));
}

bool JsonProjection::keeps_all() const { return root_->keep_all && !root_->where; }

PruneStatus JsonProjection::Parse(std::string_view text, std::size_t max_depth, json* out) const {
  return Scanner(text, max_depth).Run(*root_, out);
}

json JsonProjection::Parse(std::string_view text) const {
  json out;
  if (Parse(text, kDefaultMaxDepth, &out) != PruneStatus::kOk)
    return json(json::value_t::discarded);
  return out;
}

json JsonProjection::Project(const json& value) const { return ProjectValue(value, *root_); }

PruneStatus ParseJsonWithin(std::string_view text, std::size_t max_depth, std::size_t max_values,
                            json* out) {
  return Scanner(text, max_depth).RunWhole(max_values, out);
}

}  // namespace wasd::base
