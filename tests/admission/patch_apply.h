// Test support: applies an RFC 6902 patch made of "add" and "remove"
// operations (all wasd emits) to a JSON document, failing loudly (exception)
// when an op does not apply — the way kube-apiserver would refuse it.
#ifndef WASD_TESTS_ADMISSION_PATCH_APPLY_H_
#define WASD_TESTS_ADMISSION_PATCH_APPLY_H_

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace wasd::testing {

inline std::string DecodeBase64(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) throw std::runtime_error("base64 length not a multiple of 4");
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    for (int k = 0; k < 4; ++k) v[k] = in[i + k] == '=' ? 0 : val(in[i + k]);
    for (int k = 0; k < 4; ++k) {
      if (v[k] < 0) throw std::runtime_error("bad base64 character");
    }
    const unsigned n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((n >> 16) & 0xff);
    if (in[i + 2] != '=') out += static_cast<char>((n >> 8) & 0xff);
    if (in[i + 3] != '=') out += static_cast<char>(n & 0xff);
  }
  return out;
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
