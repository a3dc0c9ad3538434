// Parsing the text of the `wasd.io/scheduling` annotation into a JSON value.
//
// The text is JSON or YAML. JSON is tried first (the fast path, and what
// kubectl users paste most often); YAML is parsed with yaml-cpp only when the
// JSON parse fails. YAML scalars convert the way a Kubernetes client would
// read them: quoted scalars stay strings, plain `true`/`false` become
// booleans, plain decimal/hex/octal integers become integers, plain floats
// become numbers, `null`/`~`/empty become null; explicit `!!str`, `!!int`,
// `!!float`, `!!bool`, `!!null` tags are honoured.
//
// Untrusted input: nesting is bounded (kMaxConfigDepth) and so is the number
// of values a YAML document may expand to through aliases (kMaxYamlValues).
// Never throws. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_CONFIG_TEXT_H_
#define WASD_WORKLOADBUILDER_CONFIG_TEXT_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::workloadbuilder {

// The schema nests 5 levels; 64 is generous and keeps recursion shallow.
inline constexpr int kMaxConfigDepth = 64;
// An annotation is at most 256 KiB (the API server's limit for all of them),
// but YAML aliases can expand a small text into billions of values ("billion
// laughs"). A real configuration has fewer than 40 values.
inline constexpr int kMaxYamlValues = 10000;

struct ParsedText {
  nlohmann::json value;  // the parsed document; null when `error` is set
  std::string error;     // empty on success; a short reason otherwise

  bool ok() const { return error.empty(); }
};

// Parses `text` as JSON, else as YAML (one document). Empty or whitespace-only
// text is an error ("empty"). The result may be any JSON value; the caller
// decides whether it must be an object.
ParsedText ParseConfigText(std::string_view text);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_CONFIG_TEXT_H_
