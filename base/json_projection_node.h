// The compiled form of a read set (JsonProjection::Node): per member name,
// what is kept of the value there. Internal to base/json_projection.cc and
// base/json_scanner.h. Pure; no I/O.
#ifndef WASD_BASE_JSON_PROJECTION_NODE_H_
#define WASD_BASE_JSON_PROJECTION_NODE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_projection.h"

namespace wasd::base {

// A member name on a path, compiled: what is kept of the value there.
struct JsonProjection::Node {
  bool keep_all = false;  // the whole value from here down
  // Exact member names, and name patterns by their prefix ("*": ""), the
  // longest prefix first.
  std::vector<std::pair<std::string, std::shared_ptr<const Node>>> members;
  std::vector<std::pair<std::string, std::shared_ptr<const Node>>> patterns;
  // "name[key=value]": as an array's node, the elements kept (key, value).
  std::optional<std::pair<std::string, std::string>> where;

  // The node of member `name`, or null when it is not kept.
  const Node* Find(std::string_view name) const {
    for (const auto& [key, child] : members) {
      if (key == name) return child.get();
    }
    for (const auto& [prefix, child] : patterns) {
      if (name.starts_with(prefix)) return child.get();
    }
    return nullptr;
  }
};

namespace json_scan {

using nlohmann::json;
using Node = JsonProjection::Node;

inline const Node& KeepAll() {
  static const Node node = [] {
    Node n;
    n.keep_all = true;
    return n;
  }();
  return node;
}

inline std::shared_ptr<const Node> KeepAllShared() {
  static const std::shared_ptr<const Node> node(std::shared_ptr<const Node>{}, &KeepAll());
  return node;
}

// True when `element` is kept by `node`'s "[key=value]" (or it has none).
inline bool Selected(const Node& node, const json& element) {
  if (!node.where) return true;
  if (!element.is_object()) return false;
  const auto it = element.find(node.where->first);
  return it != element.end() && it->is_string() &&
         it->get_ref<const std::string&>() == node.where->second;
}

}  // namespace json_scan
}  // namespace wasd::base

#endif  // WASD_BASE_JSON_PROJECTION_NODE_H_
