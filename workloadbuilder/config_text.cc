#include "workloadbuilder/config_text.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <exception>
#include <istream>
#include <optional>
#include <streambuf>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/json_projection.h"
#include "base/utf8.h"
#include "workloadbuilder/document_builder.h"
#include "workloadbuilder/yaml_prescan.h"
#include "workloadbuilder/yaml_scalars.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

bool IsBlank(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

ParsedText Failure(TextError kind, std::string reason) {
  ParsedText r;
  r.kind = kind;
  r.error = std::move(reason);
  return r;
}

// The builder's reason for stopping, as a result.
ParsedText Stopped(const DocumentBuilder& b) {
  ParsedText r = Failure(b.stop() == DocumentBuilder::Stop::kDuplicateKey ? TextError::kDuplicateKey
                                                                          : TextError::kInvalid,
                         b.Reason());
  if (r.kind == TextError::kDuplicateKey) {
    r.key = b.duplicate_key();
    r.where = b.duplicate_path();
  }
  return r;
}

// nlohmann's SAX events into a DocumentBuilder; a false return stops the parser.
class JsonEvents {
 public:
  explicit JsonEvents(DocumentBuilder& b) : b_(b) {}

  bool null() { return b_.Value(nullptr); }
  bool boolean(bool v) { return b_.Value(v); }
  bool number_integer(json::number_integer_t v) { return b_.Value(v); }
  bool number_unsigned(json::number_unsigned_t v) { return b_.Value(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return b_.Value(v); }
  bool string(json::string_t& v) { return b_.Value(std::move(v)); }
  bool binary(json::binary_t&) { return false; }  // never produced for JSON text
  bool start_object(std::size_t) { return b_.StartObject(); }
  bool key(json::string_t& k) { return b_.Key(std::move(k)); }
  bool end_object() { return b_.End() != nullptr; }
  bool start_array(std::size_t) { return b_.StartArray(); }
  bool end_array() { return b_.End() != nullptr; }
  // Not JSON: the text is tried as YAML.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  DocumentBuilder& b_;
};

// Thrown by YamlEvents to stop yaml-cpp at once: at a nesting or value limit,
// or at a second document.
struct StopParsing {};

// The depth of a built value (a scalar is 0); values come from a builder, so
// the recursion is bounded by its depth limit.
int DepthOf(const json& v) {
  if (!v.is_structured()) return 0;
  int deepest = 0;
  for (const json& child : v) deepest = std::max(deepest, DepthOf(child));
  return deepest + 1;
}

// yaml-cpp's events into a DocumentBuilder, with YAML's extras: scalars
// resolved by tag, keys that must be scalars, and anchors whose aliases
// insert a copy (counted against the builder's value limit; the copies kept
// for anchors are bounded by the same limit).
//
// A limit stops yaml-cpp at once (StopParsing). Any other objection (a key
// that is not a scalar, a repeated key, a tag) is only noted, and later
// events are ignored: on malformed text yaml-cpp emits odd events (an
// unclosed `{"a": [1` yields a mapping as a key) before it throws its syntax
// error, and that error is the one to report.
class YamlEvents : public YAML::EventHandler {
 public:
  YamlEvents(DocumentBuilder& b, int max_anchored_values)
      : b_(b), max_anchored_values_(max_anchored_values) {}

  void OnDocumentStart(const YAML::Mark&) override {
    if (++documents_ > 1) {
      second_document_ = true;
      throw StopParsing{};
    }
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    if (rejected()) return;
    if (b_.ExpectsKey()) return Reject("mapping keys must be strings");
    if (!Check(b_.Value(nullptr))) return;
    Remember(anchor, nullptr, 1, std::nullopt);
  }

  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    if (rejected()) return;
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end() || !it->second.complete) {
      return Reject("an alias refers to a node that contains it");
    }
    const Anchored& a = it->second;
    if (b_.ExpectsKey()) {
      if (!a.text) return Reject("mapping keys must be strings");
      Check(b_.Key(*a.text));
      return;
    }
    Check(b_.Insert(a.value, a.values, a.depth));
  }

  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    if (rejected()) return;
    const bool key = b_.ExpectsKey();
    json value;
    if (!key || anchor != YAML::NullAnchor) {
      const std::string reason = ResolveYamlScalar(tag, text, value);
      if (!reason.empty()) return Reject(reason);
    } else if (!base::IsValidUtf8(text)) {
      return Reject("must be valid UTF-8");
    }
    Remember(anchor, value, 1, text);  // a copy, before the value moves into the document
    Check(key ? b_.Key(text) : b_.Value(std::move(value)));
  }

  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(anchor, /*object=*/false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(anchor, /*object=*/true);
  }
  void OnMapEnd() override { Close(); }

  // The first objection noted, "" when none.
  const std::string& rejection() const { return rejection_; }
  bool rejected() const { return !rejection_.empty(); }
  bool second_document() const { return second_document_; }
  int documents() const { return documents_; }

 private:
  struct Anchored {
    json value;
    int values = 0;
    int depth = 0;
    std::optional<std::string> text;  // scalars: the text, usable as a key
    bool complete = false;
  };
  struct OpenCollection {
    YAML::anchor_t anchor;
    int values_before;  // the builder's count before this collection
  };

  void Open(YAML::anchor_t anchor, bool object) {
    if (rejected()) return;
    if (b_.ExpectsKey()) return Reject("mapping keys must be strings");
    const int before = b_.values();
    if (!Check(object ? b_.StartObject() : b_.StartArray())) return;
    open_.push_back({anchor, before});
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{};  // aliases refused until closed
  }

  void Close() {
    if (rejected()) return;
    const json* closed = open_.empty() ? nullptr : b_.End();
    if (closed == nullptr) return Reject("not valid JSON or YAML");
    const OpenCollection o = open_.back();
    open_.pop_back();
    if (o.anchor != YAML::NullAnchor) {
      Remember(o.anchor, *closed, b_.values() - o.values_before, std::nullopt);
    }
  }

  void Remember(YAML::anchor_t anchor, const json& value, int values,
                std::optional<std::string> text) {
    if (anchor == YAML::NullAnchor) return;
    if (values > max_anchored_values_ - anchored_values_) {
      rejection_ = "anchors hold more than " + std::to_string(max_anchored_values_) + " values";
      throw StopParsing{};  // a limit
    }
    anchored_values_ += values;
    anchors_[anchor] = Anchored{value, values, DepthOf(value), std::move(text), true};
  }

  // False when the builder refused the event. Its nesting and value limits
  // stop yaml-cpp; a repeated key is noted like any other objection.
  bool Check(bool ok) {
    if (ok) return true;
    switch (b_.stop()) {
      case DocumentBuilder::Stop::kTooDeep:
      case DocumentBuilder::Stop::kTooManyValues: throw StopParsing{};
      case DocumentBuilder::Stop::kDuplicateKey: Reject(b_.Reason()); break;
      case DocumentBuilder::Stop::kNone:  // an event out of place
        Reject("not valid JSON or YAML");
        break;
    }
    return false;
  }

  void Reject(std::string reason) {
    if (rejection_.empty()) rejection_ = std::move(reason);
  }

  DocumentBuilder& b_;
  const int max_anchored_values_;
  int anchored_values_ = 0;
  int documents_ = 0;
  bool second_document_ = false;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  std::vector<OpenCollection> open_;
  std::string rejection_;
};

// A read-only stream over the caller's text: yaml-cpp reads from an
// std::istream, and an istringstream would copy the text once more.
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* p = const_cast<char*>(text.data());  // NOLINT: the get area is never written
    setg(p, p, p + text.size());
  }
};

ParsedText ParseYaml(std::string_view text, const TextOptions& options) {
  constexpr std::string_view kOneDocument = "must hold exactly one YAML document";
  DocumentBuilder b(options.max_depth, options.max_values, options.base);
  YamlEvents events(b, options.max_values);
  try {
    ViewBuffer buffer(text);
    std::istream in(&buffer);
    YAML::Parser parser(in);
    // The first document, then any event of a second one stops the parser.
    // (Never YAML::LoadAll: on some malformed input, e.g. ",21[ , 3]",
    // yaml-cpp 0.7 reports one empty document after another without
    // consuming anything, and LoadAll loops forever.)
    if (parser.HandleNextDocument(events)) parser.HandleNextDocument(events);
  } catch (const StopParsing&) {
    if (events.second_document()) return Failure(TextError::kInvalid, std::string(kOneDocument));
    if (b.stop() != DocumentBuilder::Stop::kNone) return Stopped(b);
    return Failure(TextError::kInvalid, events.rejection());
  } catch (const YAML::Exception& e) {
    return Failure(TextError::kInvalid, "not valid JSON or YAML: " + base::OneLine(e.msg) +
                                            " at line " + std::to_string(e.mark.line + 1) +
                                            ", column " + std::to_string(e.mark.column + 1));
  } catch (const std::exception&) {
    return Failure(TextError::kInvalid, "not valid JSON or YAML");
  }
  if (b.stop() == DocumentBuilder::Stop::kDuplicateKey) return Stopped(b);
  if (events.rejected()) return Failure(TextError::kInvalid, events.rejection());
  if (events.documents() != 1 || !b.done()) {
    return Failure(TextError::kInvalid, std::string(kOneDocument));
  }
  ParsedText result;
  result.value = b.Take();
  return result;
}

}  // namespace

ParsedText ParseConfigText(std::string_view text, const TextOptions& options) {
  if (text.size() > options.max_bytes) {
    return Failure(TextError::kTooLong,
                   "must have at most " + std::to_string(options.max_bytes) + " bytes");
  }
  if (IsBlank(text)) return Failure(TextError::kInvalid, "must not be empty");
  {
    // JSON within every limit, without repeated keys, as the webhook sees it
    // on every request: read by the scanner of base/json_projection.h (a tenth of
    // the instructions of nlohmann's SAX parser into a DocumentBuilder), with
    // the same result. Anything else takes the path below, which says why.
    ParsedText result;
    if (base::ParseJsonWithin(text, static_cast<std::size_t>(std::max(options.max_depth, 0)),
                              static_cast<std::size_t>(std::max(options.max_values, 0)),
                              &result.value) == base::PruneStatus::kOk) {
      return result;
    }
  }
  {
    DocumentBuilder b(options.max_depth, options.max_values, options.base);
    JsonEvents events(b);
    const bool complete = json::sax_parse(text.begin(), text.end(), &events);
    // JSON is YAML: a limit hit in JSON text would be hit in YAML too.
    if (b.stop() != DocumentBuilder::Stop::kNone) return Stopped(b);
    if (complete && b.done()) {
      ParsedText result;
      result.value = b.Take();
      return result;
    }
  }
  const std::string too_much = PrescanYaml(
      text, {options.max_depth, 2 * options.max_values + 1, kMaxYamlAnchors, kMaxYamlAliases});
  if (!too_much.empty()) return Failure(TextError::kInvalid, too_much);
  return ParseYaml(text, options);
}

}  // namespace wasd::workloadbuilder
