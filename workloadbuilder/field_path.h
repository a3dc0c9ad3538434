// FieldPath: an immutable path to a field of a Kubernetes object, rendered
// both the way Kubernetes prints it in validation errors
// (`spec.scheduling.resourceClaims[1].name`,
// `metadata.annotations[wasd.io/scheduling]`) and as an RFC 6901 JSON Pointer
// (`/spec/scheduling/resourceClaims/1/name`).
//
// A value type: copying is cheap enough for validation (two short strings);
// every method is const and returns a new path. Thread-safe as any const value.
#ifndef WASD_WORKLOADBUILDER_FIELD_PATH_H_
#define WASD_WORKLOADBUILDER_FIELD_PATH_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace wasd::workloadbuilder {

class FieldPath {
 public:
  // The empty path (renders as "" and the pointer "").
  FieldPath() = default;

  // A path from a dotted Kubernetes form made only of field names, e.g.
  // FieldPath::Parse("spec.strategy.type"). No brackets are interpreted.
  static FieldPath Parse(std::string_view dotted);

  // `a` + `.name`.
  FieldPath Child(std::string_view name) const;
  // `a` + `[i]`.
  FieldPath Index(std::size_t i) const;
  // `a` + `[key]` (map key, e.g. an annotation name).
  FieldPath Key(std::string_view key) const;

  // The Kubernetes rendering, e.g. `spec.template.spec.schedulingGroup`.
  const std::string& String() const { return text_; }
  // The JSON Pointer of the same location ("~" → "~0", "/" → "~1").
  const std::string& JsonPointer() const { return pointer_; }
  bool empty() const { return text_.empty(); }

  friend bool operator==(const FieldPath& a, const FieldPath& b) { return a.text_ == b.text_; }

 private:
  std::string text_;
  std::string pointer_;
};

// Escapes one JSON Pointer reference token (RFC 6901: "~" → "~0", "/" → "~1").
std::string EscapeJsonPointerToken(std::string_view token);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_FIELD_PATH_H_
