#include "admission/json_access.h"

namespace wasd::admission {

std::size_t NestingDepth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  std::size_t max_depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{':
      case '[':
        if (++depth > max_depth) {
          max_depth = depth;
          if (max_depth > limit) return max_depth;
        }
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return max_depth;
}

}  // namespace wasd::admission
