// FieldPath: an immutable path to a field of a Kubernetes object, rendered
// both the way Kubernetes prints it in validation errors
// (`spec.scheduling.resourceClaims[1].name`,
// `metadata.annotations[wasd.io/scheduling]`) and as an RFC 6901 JSON Pointer
// (`/spec/scheduling/resourceClaims/1/name`).
//
// Validation makes a path for every field it visits, and only an error reads
// one, so a path keeps its segments (kind, length, bytes) in one compact
// buffer and renders either form only when String() or JsonPointer() is
// called. The buffer lives inside the object up to kInlineBytes (every path
// wasd's rules build fits), so Child, Index and Key copy a few dozen bytes
// and allocate nothing; a longer path moves to the heap.
//
// A value type: every method is const and returns a new path or a new
// string. Thread-safe as any const value (no caches).
#ifndef WASD_WORKLOADBUILDER_FIELD_PATH_H_
#define WASD_WORKLOADBUILDER_FIELD_PATH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wasd::workloadbuilder {

class FieldPath {
 public:
  // The empty path (renders as "" and the pointer "").
  FieldPath() = default;
  FieldPath(const FieldPath& other);
  FieldPath(FieldPath&& other) noexcept;
  FieldPath& operator=(const FieldPath& other);
  FieldPath& operator=(FieldPath&& other) noexcept;
  ~FieldPath() = default;

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
  // Built on each call.
  std::string String() const;
  // The JSON Pointer of the same location ("~" → "~0", "/" → "~1"). Built on
  // each call.
  std::string JsonPointer() const;
  // True when String() is empty.
  bool empty() const;

  // Paths are equal when their Kubernetes renderings are.
  friend bool operator==(const FieldPath& a, const FieldPath& b) {
    return a.String() == b.String();
  }

 private:
  // Bytes of segments kept inside the object; sizeof(FieldPath) is 160.
  static constexpr std::size_t kInlineBytes = 124;

  enum class Kind : unsigned char { kChild, kIndex, kKey };
  // Appends one segment to this path (only while building a new one).
  void Push(Kind kind, std::string_view token);
  // The encoded segments, wherever they are.
  std::string_view Encoded() const {
    return heap_.empty() ? std::string_view(inline_.data(), size_) : std::string_view(heap_);
  }
  void CopyFrom(const FieldPath& other);

  // Each segment: its Kind (one byte), the token's length (LEB128), the
  // token's bytes (a name, a key, or an index in decimal).
  std::uint32_t size_ = 0;                 // bytes of inline_ in use while heap_ is empty
  std::array<char, kInlineBytes> inline_;  // only the first size_ bytes are ever read
  std::string heap_;                       // all the segments once they outgrow inline_
};

// Escapes one JSON Pointer reference token (RFC 6901: "~" → "~0", "/" → "~1").
std::string EscapeJsonPointerToken(std::string_view token);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_FIELD_PATH_H_
