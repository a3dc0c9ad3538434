#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

std::string EscapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
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

FieldPath FieldPath::Child(std::string_view name) const {
  FieldPath p = *this;
  if (!p.text_.empty()) p.text_ += '.';
  p.text_ += name;
  p.pointer_ += '/';
  p.pointer_ += EscapeJsonPointerToken(name);
  return p;
}

FieldPath FieldPath::Index(std::size_t i) const {
  FieldPath p = *this;
  const std::string n = std::to_string(i);
  p.text_ += '[';
  p.text_ += n;
  p.text_ += ']';
  p.pointer_ += '/';
  p.pointer_ += n;
  return p;
}

FieldPath FieldPath::Key(std::string_view key) const {
  FieldPath p = *this;
  p.text_ += '[';
  p.text_ += key;
  p.text_ += ']';
  p.pointer_ += '/';
  p.pointer_ += EscapeJsonPointerToken(key);
  return p;
}

}  // namespace wasd::workloadbuilder
