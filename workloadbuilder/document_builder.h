// DocumentBuilder: builds one JSON value from a stream of parse events (the
// JSON SAX parser's, or yaml-cpp's), enforcing the limits of untrusted
// configuration text while it builds, so a hostile text is refused before it
// costs more than the limits allow:
//   - nesting: at most `max_depth` open arrays/objects;
//   - size: at most `max_values` values in all (scalars and containers;
//     object keys are not values), including the copies an alias inserts;
//   - keys: each object key at most once (a repeated key is refused, as the
//     API server's strict decoding refuses a duplicate field).
// Every method returns false once a limit is hit; the builder then stays
// stopped (further events are refused) and says why.
//
// Internal to workloadbuilder/. Not thread-safe; one per parse.
#ifndef WASD_WORKLOADBUILDER_DOCUMENT_BUILDER_H_
#define WASD_WORKLOADBUILDER_DOCUMENT_BUILDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

class DocumentBuilder {
 public:
  enum class Stop { kNone, kTooDeep, kTooManyValues, kDuplicateKey };

  // `base`: where the document sits in the object under review; the path of
  // a repeated key is rooted there.
  DocumentBuilder(int max_depth, int max_values, FieldPath base);

  // Opens an object or array as the next value.
  bool StartObject() { return Start(nlohmann::json::object()); }
  bool StartArray() { return Start(nlohmann::json::array()); }
  // The key of the next member of the innermost open object.
  bool Key(std::string key);
  // A scalar as the next value.
  bool Value(nlohmann::json scalar);
  // A copy of an already built value (a YAML alias): counts as `values`
  // values and `depth` levels below the current one.
  bool Insert(const nlohmann::json& value, int values, int depth);
  // Closes the innermost open container. Returns the closed value, valid
  // until the next call, or nullptr when nothing was open.
  const nlohmann::json* End();

  // True when the innermost open container is an object waiting for a key.
  bool ExpectsKey() const;
  // Open containers.
  int depth() const { return static_cast<int>(frames_.size()); }
  // Values counted so far.
  int values() const { return values_; }
  // True when a whole value has been built.
  bool done() const { return done_; }

  Stop stop() const { return stop_; }
  // Why building stopped, e.g. "nests deeper than 64 levels"; "" when not stopped.
  std::string Reason() const;
  // kDuplicateKey: the repeated key and its path, e.g.
  // `metadata.annotations[wasd.io/scheduling].schedulingPolicy`.
  const std::string& duplicate_key() const { return duplicate_key_; }
  const FieldPath& duplicate_path() const { return duplicate_path_; }

  // The built value (null unless done()); leaves the builder empty.
  nlohmann::json Take();

 private:
  struct Frame {
    nlohmann::json value;  // the object or array being filled
    std::string key;       // objects: the key of the member being built
    bool has_key = false;
  };

  bool Start(nlohmann::json container);
  bool Count(int n);
  bool Place(nlohmann::json value);   // into the innermost open container, or as the root
  FieldPath PathOfOpenValue() const;  // where the innermost open container sits
  bool Refuse(Stop why);

  int max_depth_;
  int max_values_;
  FieldPath base_;
  std::vector<Frame> frames_;
  nlohmann::json root_;
  const nlohmann::json* last_closed_ = nullptr;
  int values_ = 0;
  bool done_ = false;
  Stop stop_ = Stop::kNone;
  std::string duplicate_key_;
  FieldPath duplicate_path_;
};

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_DOCUMENT_BUILDER_H_
