#include "base/json_text.h"

#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace wasd::base {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendUnicodeEscape(std::string* out, unsigned char c) {
  const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
  out->append(esc, sizeof esc);
}

// The byte `c` that JsonEscapeFreePrefix stopped at: '"', '\\' or a control.
void AppendEscape(std::string* out, unsigned char c, JsonEscaping escaping) {
  switch (c) {
    case '"': out->append("\\\""); return;
    case '\\': out->append("\\\\"); return;
    case '\n': out->append("\\n"); return;
    case '\r': out->append("\\r"); return;
    case '\t': out->append("\\t"); return;
    case '\b':
    case '\f':
      if (escaping == JsonEscaping::kLikeNlohmann) {
        out->append(c == '\b' ? "\\b" : "\\f");
        return;
      }
      break;
    default: break;
  }
  AppendUnicodeEscape(out, c);
}

// A run without bytes to escape that is not all ASCII, or holds DEL, in
// kSafe: valid UTF-8 sequences as they are, DEL and every other byte as an
// escape. (A sequence never crosses the run's end: the byte that ends a run
// is below 0x80.)
void AppendSafeRun(std::string* out, std::string_view s, std::size_t begin, std::size_t end) {
  std::size_t i = begin;
  while (i < end) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == 0x7F) {
        AppendUnicodeEscape(out, c);
      } else {
        out->push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    const std::size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out->append("\\ufffd");
      ++i;
    } else {
      out->append(s.substr(i, len));
      i += len;
    }
  }
}

}  // namespace

void AppendJsonEscaped(std::string* out, std::string_view value, JsonEscaping escaping) {
  const bool nlohmann = escaping == JsonEscaping::kLikeNlohmann;
  bool ascii = false;
  std::size_t run = JsonEscapeFreePrefix(value, &ascii);
  if (run == value.size() && ascii &&
      (nlohmann || std::memchr(value.data(), 0x7F, value.size()) == nullptr)) {
    out->append(value);  // most strings: written as they are
    return;
  }
  if (nlohmann && !IsValidUtf8(value)) {
    // Rare: nlohmann's own replacement, without the quotes it adds.
    const std::string text = nlohmann::json(std::string(value))
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out->append(text, 1, text.size() - 2);
    return;
  }
  for (std::size_t i = 0;;) {  // a run of bytes that need no escape, then one that does
    if (nlohmann || (ascii && std::memchr(value.data() + i, 0x7F, run) == nullptr)) {
      out->append(value.data() + i, run);
    } else {
      AppendSafeRun(out, value, i, i + run);
    }
    i += run;
    if (i == value.size()) break;
    AppendEscape(out, static_cast<unsigned char>(value[i]), escaping);
    ++i;
    run = JsonEscapeFreePrefix(value.substr(i), &ascii);
  }
}

void AppendJsonString(std::string* out, std::string_view value, JsonEscaping escaping) {
  out->push_back('"');
  AppendJsonEscaped(out, value, escaping);
  out->push_back('"');
}

std::size_t JsonEscapeFreePrefix(std::string_view s, bool* ascii) {
  const char* const begin = s.data();
  const char* const end = begin + s.size();
  const char* p = begin;
  unsigned high = 0;  // sign bits of the bytes passed over
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i below_space = _mm_set1_epi8(0x1F);
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Unsigned x <= 0x1F exactly when min(x, 0x1F) == x.
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                     _mm_cmpeq_epi8(_mm_min_epu8(x, below_space), x));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    const auto sign = static_cast<unsigned>(_mm_movemask_epi8(x));
    if (mask != 0) {
      const unsigned n = static_cast<unsigned>(std::countr_zero(mask));
      high |= sign & ((1u << n) - 1);
      *ascii = high == 0;
      return static_cast<std::size_t>(p - begin) + n;
    }
    high |= sign;
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c == '"' || c == '\\') break;
    high |= c & 0x80;
  }
  *ascii = high == 0;
  return static_cast<std::size_t>(p - begin);
}

}  // namespace wasd::base
