// UTF-8 helpers for untrusted configuration text: checking that a string is
// well-formed UTF-8 (so it can be dumped to JSON for the API server) and
// making a one-line, valid-UTF-8 excerpt of arbitrary bytes for an error
// message. Internal to workloadbuilder/. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_UTF8_H_
#define WASD_WORKLOADBUILDER_UTF8_H_

#include <string>
#include <string_view>

namespace wasd::workloadbuilder {

// True when `s` is well-formed UTF-8 as RFC 3629 defines it (the check
// nlohmann::json's serialiser applies): no overlong forms, no UTF-16
// surrogates (U+D800–DFFF, which a YAML "\ud800" escape produces), nothing
// above U+10FFFF.
bool IsValidUtf8(std::string_view s);

// `text` on one line of valid UTF-8: control bytes and bytes outside
// well-formed UTF-8 are written as \xNN.
std::string OneLine(std::string_view text);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_UTF8_H_
