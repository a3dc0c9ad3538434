#include "base/json_projection.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/json_scanner.h"

namespace wasd::base {

namespace {

using json_scan::KeepAllShared;
using json_scan::Node;
using json_scan::Scanner;
using json_scan::Selected;
using nlohmann::json;

// Builds the tree of a read set; an ended path wins over longer ones
// through it.
struct Builder {
  struct MNode {
    bool keep_all = false;
    std::map<std::string, MNode, std::less<>> members;
    std::optional<std::pair<std::string, std::string>> where;
  };
  MNode root;

  // "name[key=value]" -> name, and (key, value) into `where`.
  static std::string Split(const std::string& member,
                           std::optional<std::pair<std::string, std::string>>* where) {
    const auto open = member.find('[');
    const auto eq = member.find('=', open);
    if (open == std::string::npos || eq == std::string::npos || member.back() != ']') {
      return member;
    }
    *where = std::make_pair(member.substr(open + 1, eq - open - 1),
                            member.substr(eq + 1, member.size() - eq - 2));
    return member.substr(0, open);
  }

  void Add(const JsonPath& path) {
    MNode* n = &root;
    for (const std::string& member : path) {
      if (n->keep_all) return;
      std::optional<std::pair<std::string, std::string>> where;
      const std::string key = Split(member, &where);
      n = &n->members[key];
      if (where) n->where = std::move(where);
    }
    n->keep_all = true;
    n->members.clear();
  }

  static std::shared_ptr<const Node> Freeze(const MNode& m) {
    if (m.keep_all && !m.where) return KeepAllShared();
    auto n = std::make_shared<Node>();
    n->keep_all = m.keep_all;
    n->where = m.where;
    for (const auto& [key, child] : m.members) {
      if (!key.empty() && key.back() == '*') {
        n->patterns.emplace_back(key.substr(0, key.size() - 1), Freeze(child));
      } else {
        n->members.emplace_back(key, Freeze(child));
      }
    }
    std::stable_sort(n->patterns.begin(), n->patterns.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    return n;
  }
};

json ProjectValue(const json& v, const Node& node) {
  if (v.is_array() && node.where) {
    json out = json::array();
    for (const json& e : v) {
      // (the member `key` is dropped again by the projection unless kept)
      if (Selected(node, e)) out.push_back(node.keep_all ? e : ProjectValue(e, node));
    }
    return out;
  }
  if (node.keep_all) return v;
  if (v.is_array()) {
    json out = json::array();
    for (const json& e : v) out.push_back(ProjectValue(e, node));
    return out;
  }
  if (!v.is_object()) return v;
  json out = json::object();
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (const Node* child = node.Find(it.key()); child != nullptr) {
      out[it.key()] = ProjectValue(*it, *child);
    }
  }
  return out;
}

}  // namespace

JsonPaths PathsUnder(const JsonPath& prefix, const JsonPaths& paths) {
  JsonPaths out;
  out.reserve(paths.size());
  for (const JsonPath& path : paths) {
    JsonPath& p = out.emplace_back(prefix);
    p.insert(p.end(), path.begin(), path.end());
  }
  return out;
}

void AppendPaths(JsonPaths* to, const JsonPaths& more) {
  to->insert(to->end(), more.begin(), more.end());
}

JsonProjection::JsonProjection() : root_(KeepAllShared()) {}

JsonProjection::JsonProjection(const JsonPaths& paths) {
  Builder b;
  for (const JsonPath& path : paths) b.Add(path);
  root_ = Builder::Freeze(b.root);
}

JsonProjection JsonProjection::Under(const std::string& projected,
                                     const std::vector<std::string>& kept_whole) const {
  auto n = std::make_shared<Node>();
  n->members.emplace_back(projected, root_);
  for (const std::string& key : kept_whole) n->members.emplace_back(key, KeepAllShared());
  return JsonProjection(std::shared_ptr<const Node>(std::move(n)));
}

bool JsonProjection::keeps_all() const { return root_->keep_all && !root_->where; }

PruneStatus JsonProjection::Parse(std::string_view text, std::size_t max_depth, json* out) const {
  return Scanner(text, max_depth).Run(*root_, out);
}

json JsonProjection::Parse(std::string_view text) const {
  json out;
  if (Parse(text, kDefaultMaxDepth, &out) != PruneStatus::kOk)
    return json(json::value_t::discarded);
  return out;
}

json JsonProjection::Project(const json& value) const { return ProjectValue(value, *root_); }

PruneStatus ParseJsonWithin(std::string_view text, std::size_t max_depth, std::size_t max_values,
                            json* out) {
  return Scanner(text, max_depth).RunWhole(max_values, out);
}

}  // namespace wasd::base
