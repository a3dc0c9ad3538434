#include "workloadbuilder/field_path.h"

#include <charconv>
#include <cstring>

namespace wasd::workloadbuilder {

namespace {

// A segment's header: one kind byte and up to ten LEB128 bytes of length.
constexpr std::size_t kMaxHeadBytes = 11;

// Appends `token` escaped as EscapeJsonPointerToken does, a run at a time.
void AppendEscapedToken(std::string& out, std::string_view token) {
  for (;;) {
    const std::size_t special = token.find_first_of("~/");
    if (special == std::string_view::npos) {
      out += token;
      return;
    }
    out += token.substr(0, special);
    out += token[special] == '~' ? "~0" : "~1";
    token.remove_prefix(special + 1);
  }
}

// Calls visit(kind byte, token) for each segment of `encoded`, in order.
template <typename Visit>
void ForEachSegment(std::string_view encoded, Visit visit) {
  std::size_t i = 0;
  while (i < encoded.size()) {
    const auto kind = static_cast<unsigned char>(encoded[i++]);
    std::size_t len = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(encoded[i++]);
      len |= static_cast<std::size_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) break;
    }
    visit(kind, encoded.substr(i, len));
    i += len;
  }
}

}  // namespace

std::string EscapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  AppendEscapedToken(out, token);
  return out;
}

FieldPath::FieldPath(const FieldPath& other) { CopyFrom(other); }

FieldPath::FieldPath(FieldPath&& other) noexcept : heap_(std::move(other.heap_)) {
  if (heap_.empty()) {
    size_ = other.size_;
    std::memcpy(inline_.data(), other.inline_.data(), size_);
  }
}

FieldPath& FieldPath::operator=(const FieldPath& other) {
  if (this != &other) CopyFrom(other);
  return *this;
}

FieldPath& FieldPath::operator=(FieldPath&& other) noexcept {
  if (this == &other) return *this;
  heap_ = std::move(other.heap_);
  size_ = 0;
  if (heap_.empty()) {
    size_ = other.size_;
    std::memcpy(inline_.data(), other.inline_.data(), size_);
  }
  return *this;
}

void FieldPath::CopyFrom(const FieldPath& other) {
  if (!other.heap_.empty()) {
    heap_ = other.heap_;
    size_ = 0;
    return;
  }
  heap_.clear();
  size_ = other.size_;
  std::memcpy(inline_.data(), other.inline_.data(), size_);
}

void FieldPath::Push(Kind kind, std::string_view token) {
  char head[kMaxHeadBytes];
  std::size_t head_len = 0;
  head[head_len++] = static_cast<char>(kind);
  std::size_t len = token.size();
  do {
    const auto low = static_cast<unsigned char>(len & 0x7F);
    len >>= 7;
    head[head_len++] = static_cast<char>(len != 0 ? (low | 0x80) : low);
  } while (len != 0);

  if (heap_.empty() && size_ + head_len + token.size() <= kInlineBytes) {
    char* out = inline_.data() + size_;
    std::memcpy(out, head, head_len);
    if (!token.empty()) std::memcpy(out + head_len, token.data(), token.size());
    size_ += static_cast<std::uint32_t>(head_len + token.size());
    return;
  }
  if (heap_.empty()) {
    heap_.reserve(size_ + head_len + token.size());
    heap_.append(inline_.data(), size_);
    size_ = 0;
  }
  heap_.append(head, head_len);
  heap_.append(token);
}

FieldPath FieldPath::Parse(std::string_view dotted) {
  FieldPath p;
  std::size_t start = 0;
  while (start <= dotted.size()) {
    std::size_t dot = dotted.find('.', start);
    if (dot == std::string_view::npos) dot = dotted.size();
    if (dot > start) p.Push(Kind::kChild, dotted.substr(start, dot - start));
    start = dot + 1;
  }
  return p;
}

FieldPath FieldPath::Child(std::string_view name) const {
  FieldPath p(*this);
  p.Push(Kind::kChild, name);
  return p;
}

FieldPath FieldPath::Index(std::size_t i) const {
  char digits[20];  // the most a 64-bit size_t takes in decimal
  const auto end = std::to_chars(digits, digits + sizeof digits, i).ptr;
  FieldPath p(*this);
  p.Push(Kind::kIndex, std::string_view(digits, static_cast<std::size_t>(end - digits)));
  return p;
}

FieldPath FieldPath::Key(std::string_view key) const {
  FieldPath p(*this);
  p.Push(Kind::kKey, key);
  return p;
}

std::string FieldPath::String() const {
  const std::string_view encoded = Encoded();
  std::string out;
  out.reserve(encoded.size());  // each segment's header is at least its punctuation
  ForEachSegment(encoded, [&out](unsigned char kind, std::string_view token) {
    if (kind == static_cast<unsigned char>(Kind::kChild)) {
      if (!out.empty()) out += '.';
      out += token;
    } else {
      out += '[';
      out += token;
      out += ']';
    }
  });
  return out;
}

std::string FieldPath::JsonPointer() const {
  const std::string_view encoded = Encoded();
  std::string out;
  out.reserve(encoded.size());
  ForEachSegment(encoded, [&out](unsigned char, std::string_view token) {
    out += '/';
    AppendEscapedToken(out, token);
  });
  return out;
}

bool FieldPath::empty() const {
  // Only names render as nothing, and only empty ones before any other text.
  bool empty = true;
  ForEachSegment(Encoded(), [&empty](unsigned char kind, std::string_view token) {
    if (kind != static_cast<unsigned char>(Kind::kChild) || !token.empty()) empty = false;
  });
  return empty;
}

}  // namespace wasd::workloadbuilder
