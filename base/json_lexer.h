// The lexical pieces of the JSON projection's scanner (base/json_scanner.h):
// plain-byte runs (eight bytes at a time, SSE2 when the compiler has it),
// whitespace, literals, string escapes and their decoding. Internal to
// base/json_projection.cc; header-only so that the scanner's hot loops keep
// them inlined. Pure; no I/O.
#ifndef WASD_BASE_JSON_LEXER_H_
#define WASD_BASE_JSON_LEXER_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/utf8.h"

namespace wasd::base::json_lexer {

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHighBits = 0x8080808080808080ull;

// A byte a string may hold as it is: printable ASCII but the quote and the
// backslash. Everything else needs a closer look (escape, end, UTF-8, error).
constexpr bool IsPlain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Moves `p` past whitespace. The API server sends compact JSON, so the usual
// answer is one compare: every byte that may follow is above ' '.
[[gnu::always_inline]] inline void SkipSpaceAt(const char*& p, const char* end) {
  if (p < end && static_cast<unsigned char>(*p) <= ' ') {
    while (p < end && IsSpace(*p)) ++p;
  }
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// How many of the 8 bytes at `p` are plain before the first one that is not
// (8: all are), with the usual "has a zero byte" bit tricks on a 64-bit
// word. Each test flags the first matching byte exactly (wrong flags can
// only appear above it), so the lowest flag is the answer.
inline unsigned PlainPrefix8(const char* p) {
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
inline const char* PlainRun(const char* p, const char* end) {
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
inline bool IsLiteral(const char* p, const char* end, const char (&word)[N]) {
  return static_cast<std::size_t>(end - p) >= N - 1 && std::memcmp(p, word, N - 1) == 0;
}

// The \uXXXX code unit at `p` (which is at the '\'), or -1.
inline int CodeUnit(const char* p, const char* end) {
  if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
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
inline const char* SkipEscape(const char* p, const char* end) {
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

inline void AppendUtf8(std::string& out, std::uint32_t cp) {
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
inline std::string Unescape(const char* begin, const char* end) {
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

}  // namespace wasd::base::json_lexer

#endif  // WASD_BASE_JSON_LEXER_H_
