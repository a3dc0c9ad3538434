// Writing JSON text: the one string escaper of wasd, for the writers that
// build JSON as text instead of through a document (log lines, Events, the
// webhook's answers).
//
// Two escapings, one loop:
// - kSafe (log lines, Events): '"' and '\\' escaped, \n \r \t, every other
//   byte below 0x20 and DEL as \u00xx, valid UTF-8 as it is and each byte
//   that is not part of valid UTF-8 as \ufffd, so any bytes give valid JSON
//   on one line.
// - kLikeNlohmann (the webhook's answers, compared byte for byte with the
//   same answer written through a document): exactly what nlohmann's
//   dump(-1, ' ', false, error_handler_t::replace) writes: \b \f short, DEL as
//   it is, invalid UTF-8 replaced as nlohmann replaces it.
//
// Pure; thread-safe.
#ifndef WASD_BASE_JSON_TEXT_H_
#define WASD_BASE_JSON_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace wasd::base {

enum class JsonEscaping { kSafe, kLikeNlohmann };

// Appends `value` to `*out` as the inside of a JSON string (no quotes).
void AppendJsonEscaped(std::string* out, std::string_view value,
                       JsonEscaping escaping = JsonEscaping::kSafe);

// Appends `value` as a JSON string, quotes included.
void AppendJsonString(std::string* out, std::string_view value,
                      JsonEscaping escaping = JsonEscaping::kSafe);

// The length of the longest prefix of `s` with no byte that a JSON string
// must escape ('"', '\\' and bytes below 0x20), and in *ascii whether that
// prefix is all ASCII. 16 bytes at a time.
std::size_t JsonEscapeFreePrefix(std::string_view s, bool* ascii);

}  // namespace wasd::base

#endif  // WASD_BASE_JSON_TEXT_H_
