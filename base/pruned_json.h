// PrunedParse: reads a JSON text once, validating all of it as strictly as
// nlohmann::json::parse does, but builds values only for the members a
// Selection names. Everything else is checked and skipped without being
// decoded or allocated.
//
// Why: an AdmissionReview carries the whole object (a Deployment with its
// containers, env, managedFields and the last-applied copy of itself: 9 KB
// to 200 KB and more), while the handlers read a few dozen bytes of it.
// Building the full document was most of a request's cost; see
// tools/bench/RESULTS.md for the figures.
//
// The grammar accepted is exactly RFC 8259 as nlohmann/json 3.11 accepts it:
// optional UTF-8 BOM, strict UTF-8 in strings, paired \u surrogates, no
// control characters in strings, the JSON number grammar with non-finite
// floats refused, and nothing after the root value but whitespace (or a NUL
// byte, which nlohmann takes for the end of the text). Nesting
// deeper than `max_depth` arrays/objects is refused. A duplicate member keeps
// the last value, as nlohmann does.
//
// Kept values get the types nlohmann gives them (unsigned and signed
// integers, floats); every number that is not a short integer is decoded by
// nlohmann itself.
//
// ParseJsonWithin reads a whole document the same way, under the limits of
// untrusted configuration text (workloadbuilder/config_text.h).
//
// Pure; thread-safe.
#ifndef WASD_BASE_PRUNED_JSON_H_
#define WASD_BASE_PRUNED_JSON_H_

#include <cstddef>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::base {

// One member of an object to keep; a key ending in '*' keeps every member
// whose name starts with what comes before it. With no `members`, its value is kept
// whole. With `members`, an object value keeps only those members (each
// again a Selection); a value of any other type is kept whole, so a handler
// still sees the type it was sent.
struct Selection {
  std::string_view key;
  std::span<const Selection> members = {};
};

enum class PruneStatus {
  kOk,
  kInvalid,        // not JSON
  kTooDeep,        // nested deeper than allowed
  kTooManyValues,  // ParseJsonWithin: more values than allowed
  kDuplicateKey,   // ParseJsonWithin: an object key repeated
};

// Parses `text`. With kOk, `*out` holds the root value pruned to `root`
// (a root that is not an object is kept whole). Otherwise `*out` is left
// unspecified.
PruneStatus PrunedParse(std::string_view text, std::span<const Selection> root,
                        std::size_t max_depth, nlohmann::json* out);

// Parses the whole of `text` into `*out` (same grammar as PrunedParse),
// refusing more than `max_depth` levels of nesting, more than `max_values`
// values (scalars and containers; keys are not values) and any object key
// that appears twice. With kOk, `*out` is the document nlohmann::json::parse
// gives; otherwise it is unspecified. When several of these are wrong, which
// status comes back is unspecified.
PruneStatus ParseJsonWithin(std::string_view text, std::size_t max_depth, std::size_t max_values,
                            nlohmann::json* out);

// For writers of JSON text: the length of the longest prefix of `s` with no
// byte that a JSON string must escape ('"', '\\' and bytes below 0x20), and
// in *ascii whether that prefix is all ASCII. 16 bytes at a time.
std::size_t JsonEscapeFreePrefix(std::string_view s, bool* ascii);

}  // namespace wasd::base

#endif  // WASD_BASE_PRUNED_JSON_H_
