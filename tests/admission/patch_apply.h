// Test support: applies an RFC 6902 patch made of "add" and "remove"
// operations (all wasd emits) to a JSON document, failing loudly (exception)
// when an op does not apply — the way kube-apiserver would refuse it.
#ifndef WASD_TESTS_ADMISSION_PATCH_APPLY_H_
#define WASD_TESTS_ADMISSION_PATCH_APPLY_H_

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "base/base64.h"

namespace wasd::testing {

// The one base64 decoder (base/base64.h), throwing like the rest of this
// helper when the webhook's patch is not valid base64.
inline std::string DecodeBase64(const std::string& in) {
  base::Result<std::string> out = base::Base64Decode(in);
  if (!out.ok()) throw std::runtime_error(out.status().message());
  return std::move(out).value();
}

inline nlohmann::json ApplyAddPatch(nlohmann::json doc, const nlohmann::json& patch) {
  for (const auto& op : patch) {
    const bool remove = op.at("op") == "remove";
    if (op.at("op") != "add" && !remove) {
      throw std::runtime_error("unexpected op " + op.at("op").dump());
    }
    const std::string path = op.at("path").get<std::string>();
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) throw std::runtime_error("bad path " + path);
    nlohmann::json::json_pointer parent_ptr(path.substr(0, slash));
    std::string last = path.substr(slash + 1);
    // Unescape the last token (~1 → /, ~0 → ~).
    std::string token;
    for (std::size_t i = 0; i < last.size(); ++i) {
      if (last[i] == '~' && i + 1 < last.size()) {
        token += last[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += last[i];
      }
    }
    if (!doc.contains(parent_ptr)) throw std::runtime_error("parent missing for " + path);
    nlohmann::json& parent = doc.at(parent_ptr);
    if (remove) {
      if (!parent.is_object() || parent.erase(token) != 1) {
        throw std::runtime_error("nothing to remove at " + path);
      }
    } else if (parent.is_object()) {
      parent[token] = op.at("value");
    } else if (parent.is_array() && token == "-") {
      parent.push_back(op.at("value"));
    } else {
      throw std::runtime_error("cannot add at " + path);
    }
  }
  return doc;
}

}  // namespace wasd::testing

#endif  // WASD_TESTS_ADMISSION_PATCH_APPLY_H_
