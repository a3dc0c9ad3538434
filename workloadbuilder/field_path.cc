#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

namespace {

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

}  // namespace

std::string EscapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  AppendEscapedToken(out, token);
  return out;
}

FieldPath FieldPath::Parse(std::string_view dotted) {
  FieldPath p;
  std::size_t start = 0;
  while (start <= dotted.size()) {
    std::size_t dot = dotted.find('.', start);
    if (dot == std::string_view::npos) dot = dotted.size();
    if (dot > start) p = p.Child(dotted.substr(start, dot - start));
    start = dot + 1;
  }
  return p;
}

// Each builds the new strings at their final size (one allocation each):
// validation makes a path for every field it visits.
FieldPath FieldPath::Child(std::string_view name) const {
  FieldPath p;
  p.text_.reserve(text_.size() + 1 + name.size());
  p.text_ += text_;
  if (!p.text_.empty()) p.text_ += '.';
  p.text_ += name;
  p.pointer_.reserve(pointer_.size() + 1 + name.size());
  p.pointer_ += pointer_;
  p.pointer_ += '/';
  AppendEscapedToken(p.pointer_, name);
  return p;
}

FieldPath FieldPath::Index(std::size_t i) const {
  FieldPath p;
  const std::string n = std::to_string(i);
  p.text_.reserve(text_.size() + 2 + n.size());
  p.text_ += text_;
  p.text_ += '[';
  p.text_ += n;
  p.text_ += ']';
  p.pointer_.reserve(pointer_.size() + 1 + n.size());
  p.pointer_ += pointer_;
  p.pointer_ += '/';
  p.pointer_ += n;
  return p;
}

FieldPath FieldPath::Key(std::string_view key) const {
  FieldPath p;
  p.text_.reserve(text_.size() + 2 + key.size());
  p.text_ += text_;
  p.text_ += '[';
  p.text_ += key;
  p.text_ += ']';
  p.pointer_.reserve(pointer_.size() + 1 + key.size());
  p.pointer_ += pointer_;
  p.pointer_ += '/';
  AppendEscapedToken(p.pointer_, key);
  return p;
}

}  // namespace wasd::workloadbuilder
