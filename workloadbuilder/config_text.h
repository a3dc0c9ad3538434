// Parsing the text of the `wasd.io/scheduling` annotation into a JSON value.
//
// The text is JSON or YAML. JSON is tried first (the fast path, and what
// kubectl users paste most often); YAML is parsed with yaml-cpp only when the
// text is not JSON. YAML scalars convert the way a Kubernetes client would
// read them (yaml_scalars.h).
//
// Untrusted input, so the work per text is bounded before and while parsing
// (docs/design.md Q16):
//   1. text longer than `max_bytes` (by default 256 KiB, the API server's
//      limit for all annotations of an object together) is refused before
//      any parser sees it;
//   2. both parsers feed a DocumentBuilder that refuses more than
//      `max_depth` levels of nesting, more than `max_values` values (YAML
//      aliases included) and any repeated key, stopping the parser at once;
//   3. YAML text is first pre-scanned (yaml_prescan.h) in one linear pass for
//      nesting, nodes, anchors and aliases, because yaml-cpp's scanner reads
//      ahead (and allocates) before it reports the first event.
// Never throws. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_CONFIG_TEXT_H_
#define WASD_WORKLOADBUILDER_CONFIG_TEXT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

// kube-apiserver refuses an object whose annotations, keys and values
// together, exceed 256 KiB (apimachinery TotalAnnotationSizeLimitB), so no
// annotation text stored in a cluster is longer.
inline constexpr std::size_t kMaxConfigTextBytes = std::size_t{256} * 1024;
// The schema nests 5 levels; 64 is generous and keeps recursion shallow.
inline constexpr int kMaxConfigDepth = 64;
// A real configuration has fewer than 40 values; 10,000 also bounds what YAML
// aliases can expand a small text into ("billion laughs").
inline constexpr int kMaxConfigValues = 10000;
// wasd's schema has no use for anchors; these bound only what yaml-cpp keeps
// per anchor name before the value limit applies.
inline constexpr int kMaxYamlAnchors = 100;
inline constexpr int kMaxYamlAliases = 1000;

struct TextOptions {
  std::size_t max_bytes = kMaxConfigTextBytes;
  int max_depth = kMaxConfigDepth;
  int max_values = kMaxConfigValues;
  // Where the text sits in the object under review: the path of a repeated
  // key is rooted here (e.g. `metadata.annotations[wasd.io/scheduling]`).
  FieldPath base;
};

enum class TextError {
  kNone,
  kInvalid,       // empty, not JSON or YAML, or beyond a nesting/value limit
  kTooLong,       // longer than max_bytes; nothing was parsed
  kDuplicateKey,  // an object key repeated (JSON or YAML)
};

struct ParsedText {
  nlohmann::json value;  // the parsed document; null when `error` is set
  std::string error;     // empty on success; a short reason otherwise
  TextError kind = TextError::kNone;
  // kDuplicateKey: the repeated key and its path below `TextOptions::base`.
  std::string key;
  FieldPath where;

  bool ok() const { return error.empty(); }
};

// Parses `text` as JSON, else as YAML (one document). Empty or whitespace-only
// text is an error ("must not be empty"); text over `options.max_bytes` is
// kTooLong with the error "must have at most N bytes". The result may be any
// JSON value; the caller decides whether it must be an object.
ParsedText ParseConfigText(std::string_view text, const TextOptions& options = {});

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_CONFIG_TEXT_H_
