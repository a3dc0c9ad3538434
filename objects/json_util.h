// Small read-only helpers for untrusted JSON values (nlohmann::json).
//
// Kubernetes objects arrive from the network, so every lookup here checks the
// type first and never inserts: no operator[] on a const-unsafe path, no
// exceptions. A JSON `null` member is treated like an absent one, the way Go's
// decoder treats `null` for pointers, slices and maps.
//
// Pure functions; thread-safe.
#ifndef WASD_OBJECTS_JSON_UTIL_H_
#define WASD_OBJECTS_JSON_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::objects {

// The member `key` of `object`, or nullptr when `object` is not an object, has
// no such member, or the member is null.
const nlohmann::json* Member(const nlohmann::json& object, std::string_view key);

// Follows `keys` from `root` with Member(); nullptr as soon as a step fails.
const nlohmann::json* MemberPath(const nlohmann::json& root,
                                 std::initializer_list<std::string_view> keys);

// The string, or nullptr when `value` is null or not a string.
const std::string* AsString(const nlohmann::json* value);

// The integer value when `value` is a JSON integer that fits in int64
// (floating-point numbers are not integers here, as in Go's decoder).
std::optional<std::int64_t> AsInt(const nlohmann::json* value);

// Equality used for immutability and "did it change" checks (docs/api.md
// §b.0): null equals an absent member and an empty list; an absent or null
// object is different from {}; numbers compare by value. Values nested
// deeper than kMaxCompareDepth compare as different (never recurses further).
bool SemanticEqual(const nlohmann::json& a, const nlohmann::json& b);

// Nesting limit for untrusted configuration values. The real schema nests at
// most 5 levels (config → resourceClaims → item → …); 64 leaves room for
// anything legitimate and keeps every recursive walk shallow.
inline constexpr int kMaxCompareDepth = 64;

// True when `value` nests deeper than `limit` levels (a scalar is depth 0,
// `{}` and `[]` depth 1). Recursion stops at `limit`.
bool DepthExceeds(const nlohmann::json& value, int limit);

// The group part of an apiVersion: "apps/v1" → "apps", "v1" → "".
std::string ApiGroupOf(std::string_view api_version);

}  // namespace wasd::objects

#endif  // WASD_OBJECTS_JSON_UTIL_H_
