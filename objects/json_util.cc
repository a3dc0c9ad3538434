#include "objects/json_util.h"

#include <limits>

namespace wasd::objects {

using nlohmann::json;

const json* Member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

const json* MemberPath(const json& root, std::initializer_list<std::string_view> keys) {
  const json* cur = &root;
  for (std::string_view k : keys) {
    cur = Member(*cur, k);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

const std::string* AsString(const json* value) {
  if (value == nullptr || !value->is_string()) return nullptr;
  return &value->get_ref<const std::string&>();
}

std::optional<std::int64_t> AsInt(const json* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_number_integer() && !value->is_number_unsigned()) {
    return value->get<std::int64_t>();
  }
  if (value->is_number_unsigned()) {
    const auto u = value->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  return std::nullopt;
}

namespace {

bool IsNullOrEmptyList(const json& v) { return v.is_null() || (v.is_array() && v.empty()); }

bool EqualAt(const json& a, const json& b, int depth) {
  if (depth > kMaxCompareDepth) return false;
  if (a.is_null() || b.is_null()) {
    return IsNullOrEmptyList(a) && IsNullOrEmptyList(b);
  }
  if (a.is_number() && b.is_number()) return a == b;
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    static const json kNull;
    for (const auto& [key, value] : a.items()) {
      const auto it = b.find(key);
      if (!EqualAt(value, it == b.end() ? kNull : *it, depth + 1)) return false;
    }
    for (const auto& [key, value] : b.items()) {
      if (a.find(key) == a.end() && !EqualAt(kNull, value, depth + 1)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!EqualAt(a[i], b[i], depth + 1)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

bool SemanticEqual(const json& a, const json& b) { return EqualAt(a, b, 0); }

bool DepthExceeds(const json& value, int limit) {
  if (!value.is_structured()) return false;
  if (limit <= 0) return true;
  for (const json& child : value) {
    if (DepthExceeds(child, limit - 1)) return true;
  }
  return false;
}

std::string ApiGroupOf(std::string_view api_version) {
  const auto slash = api_version.find('/');
  if (slash == std::string_view::npos) return {};
  return std::string(api_version.substr(0, slash));
}

}  // namespace wasd::objects
