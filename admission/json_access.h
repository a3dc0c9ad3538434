// Safe read access to untrusted JSON: every lookup checks presence and type
// and returns null/empty instead of throwing or inserting (never operator[]
// on input). Pure; thread-safe.
#ifndef WASD_ADMISSION_JSON_ACCESS_H_
#define WASD_ADMISSION_JSON_ACCESS_H_

#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::admission {

// The member `key` of `obj` when `obj` is an object that has it; else null.
const nlohmann::json* Member(const nlohmann::json* obj, std::string_view key);
// Follows a chain of member names; null when any step is missing.
const nlohmann::json* Path(const nlohmann::json* obj, std::initializer_list<std::string_view> keys);
// The string value at `v`, or `fallback` when `v` is null or not a string.
std::string_view StringOr(const nlohmann::json* v, std::string_view fallback = {});
// True when `v` is present and not JSON null.
inline bool IsSet(const nlohmann::json* v) { return v != nullptr && !v->is_null(); }

// Maximum nesting of arrays/objects in `text`, counted without parsing
// (strings skipped). Stops counting at `limit` + 1. Used to refuse deeply
// nested input before it reaches a parser.
std::size_t NestingDepth(std::string_view text, std::size_t limit);

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_JSON_ACCESS_H_
