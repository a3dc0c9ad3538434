// JsonProjection: reads a JSON text once, validating all of it as strictly
// as nlohmann::json::parse does, but builds values only for the members a
// read set names. Everything else is checked and skipped without being
// decoded or allocated. The one JSON pruning mechanism of wasd: the webhook
// decodes AdmissionReviews with it, the informers their list bodies and
// watch lines.
//
// Why: an AdmissionReview carries the whole object (a Deployment with its
// containers, env, managedFields and the last-applied copy of itself: 9 KB
// to 200 KB and more), and a cached pod is 10-25 KB of JSON, while the
// readers use a few dozen bytes to 1 KB of it. Building the full document
// was most of the cost of a request or of a watch event.
//
// A read set is a list of paths of member names from the root:
//
//   base::JsonProjection p({{"metadata", "name"},
//                           {"metadata", "labels"},               // every label
//                           {"metadata", "annotations", "wasd.io/*"},
//                           {"spec", "schedulingGates"}});        // the whole array
//   nlohmann::json pod = p.Parse(text);                           // discarded on bad JSON
//
// - A path that ends keeps the whole value at its end; a shorter path wins
//   over a longer one through the same member ({"spec"} and {"spec", "x"}
//   keep all of spec).
// - Arrays are transparent: a path through an array applies to each element
//   ({"metadata", "ownerReferences", "uid"} keeps only the uid of each owner
//   reference). A scalar where a path goes on is kept as it is (the readers
//   check types).
// - "*" as a member name matches every member at its level; a name ending
//   in '*' matches every member that starts with what comes before it
//   ("wasd.io/*"). An exact name wins over a pattern, a longer pattern over
//   a shorter one.
// - "name[key=value]" keeps, of the array at `name`, only the elements that
//   are objects whose member `key` is the string `value` ({"status",
//   "conditions[type=PodScheduled]"} keeps one condition of a pod's five); a
//   path may go on below it.
//
// Under(key) wraps a projection for the same objects one level down: a list
// body keeps `items` (projected) and `metadata`; a watch event line keeps
// `type` and `object` (projected).
//
// How to add a field: a reader declares the paths it reads beside its code
// (the webhook handlers in admission/, the reconciler's readers in
// reconciler/); add the path there, next to the code that starts reading
// it. Those declarations are composed into one projection per use; the
// tests that run each reader on pruned and on whole input catch a path
// that was forgotten.
//
// The grammar accepted is exactly RFC 8259 as nlohmann/json 3.11 accepts it:
// optional UTF-8 BOM, strict UTF-8 in strings, paired \u surrogates, no
// control characters in strings, the JSON number grammar with non-finite
// floats refused, and nothing after the root value but whitespace (or a NUL
// byte, which nlohmann takes for the end of the text). Nesting deeper than
// `max_depth` arrays/objects is refused. A duplicate member keeps the last
// value, as nlohmann does. Kept values get the types nlohmann gives them
// (unsigned and signed integers, floats); every number that is not a short
// integer is decoded by nlohmann itself.
//
// ParseJsonWithin reads a whole document the same way, under the limits of
// untrusted configuration text (workloadbuilder/config_text.h).
//
// Pure; immutable after construction; thread-safe to share.
#ifndef WASD_BASE_JSON_PROJECTION_H_
#define WASD_BASE_JSON_PROJECTION_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace wasd::base {

// One path of member names from the root, and a read set of them.
using JsonPath = std::vector<std::string>;
using JsonPaths = std::vector<JsonPath>;

// `paths`, each with `prefix` in front (a reader's paths within a bigger
// document, e.g. the object of an AdmissionReview).
JsonPaths PathsUnder(const JsonPath& prefix, const JsonPaths& paths);
// Appends `more` to `*to`.
void AppendPaths(JsonPaths* to, const JsonPaths& more);

enum class PruneStatus {
  kOk,
  kInvalid,        // not JSON
  kTooDeep,        // nested deeper than allowed
  kTooManyValues,  // ParseJsonWithin: more values than allowed
  kDuplicateKey,   // ParseJsonWithin: an object key repeated
};

class JsonProjection {
 public:
  // The compiled read set: one node per member name on a path.
  struct Node;

  // The nesting limit of Parse(text): the API server's own limit on the
  // objects it decodes.
  static constexpr std::size_t kDefaultMaxDepth = 10000;

  // Keeps everything (the identity projection).
  JsonProjection();
  explicit JsonProjection(const JsonPaths& paths);

  // {projected: <this>, kept_whole_1: <everything>, ...}: this projection
  // one level down under `projected`, and `kept_whole` members kept in full.
  JsonProjection Under(const std::string& projected,
                       const std::vector<std::string>& kept_whole = {}) const;

  bool keeps_all() const;

  // Parses `text`. With kOk, `*out` holds the root value projected;
  // otherwise `*out` is unspecified.
  PruneStatus Parse(std::string_view text, std::size_t max_depth, nlohmann::json* out) const;
  // The same within kDefaultMaxDepth; a discarded value (is_discarded())
  // when the text is not valid JSON or nests deeper.
  nlohmann::json Parse(std::string_view text) const;
  // The same projection of a value already decoded (e.g. a write's answer).
  nlohmann::json Project(const nlohmann::json& value) const;

 private:
  explicit JsonProjection(std::shared_ptr<const Node> root) : root_(std::move(root)) {}
  std::shared_ptr<const Node> root_;
};

// Parses the whole of `text` into `*out` (same grammar as JsonProjection),
// refusing more than `max_depth` levels of nesting, more than `max_values`
// values (scalars and containers; keys are not values) and any object key
// that appears twice. With kOk, `*out` is the document nlohmann::json::parse
// gives; otherwise it is unspecified. When several of these are wrong, which
// status comes back is unspecified.
PruneStatus ParseJsonWithin(std::string_view text, std::size_t max_depth, std::size_t max_values,
                            nlohmann::json* out);

}  // namespace wasd::base

#endif  // WASD_BASE_JSON_PROJECTION_H_
