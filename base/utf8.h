// UTF-8, the one validator of wasd: every reader of untrusted bytes (the
// admission JSON decoder, the YAML config text, the log line encoder, Go
// quoting of field errors) asks here whether a sequence is well-formed, as
// RFC 3629 defines it — no overlong forms, no UTF-16 surrogates
// (U+D800–DFFF), nothing above U+10FFFF. That is the check nlohmann::json's
// serialiser and Go's utf8.Valid apply, so what wasd accepts they accept.
// Pure; thread-safe.
#ifndef WASD_BASE_UTF8_H_
#define WASD_BASE_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace wasd::base {

// The length (1–4) of the well-formed UTF-8 sequence that starts at s[i], or
// 0 when the bytes there are not one. REQUIRES: i < s.size().
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i);

// True when every byte of `s` belongs to a well-formed sequence (a YAML
// "\ud800" escape, which produces a surrogate, is not).
bool IsValidUtf8(std::string_view s);

// `text` on one line of valid UTF-8: control bytes and bytes outside
// well-formed UTF-8 are written as \xNN.
std::string OneLine(std::string_view text);

}  // namespace wasd::base

#endif  // WASD_BASE_UTF8_H_
