#include "admission/json_access.h"

namespace wasd::admission {

const nlohmann::json* Member(const nlohmann::json* obj, std::string_view key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

const nlohmann::json* Path(const nlohmann::json* obj,
                           std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    obj = Member(obj, k);
    if (obj == nullptr) return nullptr;
  }
  return obj;
}

std::string_view StringOr(const nlohmann::json* v, std::string_view fallback) {
  if (v == nullptr || !v->is_string()) return fallback;
  return v->get_ref<const std::string&>();
}

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
