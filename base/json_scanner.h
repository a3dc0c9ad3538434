// The one-pass scanner behind JsonProjection::Parse and ParseJsonWithin
// (base/json_projection.h): it validates the whole text and builds only what
// a projection node keeps. Internal to base/json_projection.cc. Pure; no I/O.
#ifndef WASD_BASE_JSON_SCANNER_H_
#define WASD_BASE_JSON_SCANNER_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_lexer.h"
#include "base/json_projection.h"
#include "base/json_projection_node.h"

namespace wasd::base {

namespace json_scan {

using nlohmann::json;
using Node = JsonProjection::Node;
using namespace json_lexer;  // NOLINT(google-build-using-namespace): the scanner's own lexer

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

}  // namespace json_scan
}  // namespace wasd::base

#endif  // WASD_BASE_JSON_SCANNER_H_
