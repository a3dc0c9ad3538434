#include "kube/projection.h"

#include <utility>

namespace wasd::kube {

namespace {

using Node = Projection::Node;
using nlohmann::json;

std::shared_ptr<const Node> KeepAllNode() {
  static const std::shared_ptr<const Node> node = [] {
    auto n = std::make_shared<Node>();
    n->keep_all = true;
    return n;
  }();
  return node;
}

// Builds the mutable tree of `paths`; an ended path wins over longer ones
// through it ({"spec"} and {"spec", "x"} keep all of spec).
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

  void Add(const std::vector<std::string>& path) {
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
    if (m.keep_all && !m.where) return KeepAllNode();
    auto n = std::make_shared<Node>();
    n->keep_all = m.keep_all;
    n->where = m.where;
    for (const auto& [key, child] : m.members) {
      if (key == "*") {
        n->any = Freeze(child);
      } else {
        n->members.emplace(key, Freeze(child));
      }
    }
    return n;
  }
};

struct Frame {
  const Node* node = nullptr;  // null: the container is dropped
  bool is_array = false;
  bool element = false;  // an element of an array (a `where` applies to it)
};

// True when `element` is kept by `node`'s "[key=value]" (or it has none).
bool Selected(const Node& node, const json& element) {
  if (!node.where) return true;
  if (!element.is_object()) return false;
  const auto it = element.find(node.where->first);
  return it != element.end() && it->is_string() &&
         it->get_ref<const std::string&>() == node.where->second;
}

// The parse callback's state: for each open container (by the parser's
// depth) the projection node that applies inside it, or null when the
// container is being dropped.
class Filter {
 public:
  explicit Filter(const Node* root) : root_(root) {}

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    const auto d = static_cast<std::size_t>(depth);
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        const Node* node = root_;
        bool element = false;
        if (d > 0) {
          const Frame parent = d - 1 < frames_.size() ? frames_[d - 1] : Frame{};
          node = parent.is_array ? parent.node : pending_;
          element = parent.is_array;
        }
        frames_.resize(d);
        frames_.push_back({node, event == json::parse_event_t::array_start, element});
        return node != nullptr;
      }
      case json::parse_event_t::object_end: {
        // An array element of a "[key=value]" node, now whole: kept or not.
        const Frame f = d < frames_.size() ? frames_[d] : Frame{};
        if (!f.element || f.node == nullptr || !f.node->where) return true;
        if (!Selected(*f.node, parsed)) return false;
        const std::string& key = f.node->where->first;
        if (!f.node->keep_all && !f.node->any && f.node->members.count(key) == 0) {
          parsed.erase(key);
        }
        return true;
      }
      case json::parse_event_t::key: {
        const Node* parent = d >= 1 && d - 1 < frames_.size() ? frames_[d - 1].node : nullptr;
        pending_ = nullptr;
        if (parent == nullptr) return false;
        if (parent->keep_all) {
          // Below a kept element, everything (its own arrays unfiltered).
          pending_ = KeepAllNode().get();
          return true;
        }
        const std::string& key = parsed.get_ref<const std::string&>();
        if (auto it = parent->members.find(key); it != parent->members.end()) {
          pending_ = it->second.get();
        } else if (parent->any) {
          pending_ = parent->any.get();
        } else if (parent->where && frames_[d - 1].element && key == parent->where->first) {
          pending_ = KeepAllNode().get();  // read by the selection, then dropped
        }
        return pending_ != nullptr;
      }
      case json::parse_event_t::value: {
        // A scalar element of a "[key=value]" array is never selected.
        const Frame parent = d >= 1 && d - 1 < frames_.size() ? frames_[d - 1] : Frame{};
        return !(parent.is_array && parent.node != nullptr && parent.node->where);
      }
      default: return true;  // container ends: kept unless already dropped
    }
  }

 private:
  const Node* root_;
  const Node* pending_ = nullptr;  // the node of the value after the last key
  std::vector<Frame> frames_;
};

json ProjectValue(const json& v, const Node& node) {
  if (v.is_array() && node.where) {
    json out = json::array();
    for (const json& e : v) {
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
    const Node* child = nullptr;
    if (auto m = node.members.find(it.key()); m != node.members.end()) {
      child = m->second.get();
    } else if (node.any) {
      child = node.any.get();
    }
    if (child != nullptr) out[it.key()] = ProjectValue(*it, *child);
  }
  return out;
}

}  // namespace

json Projection::Project(const json& value) const { return ProjectValue(value, *root_); }

Projection::Projection() : root_(KeepAllNode()) {}

Projection::Projection(const std::vector<std::vector<std::string>>& paths) {
  Builder b;
  for (const auto& path : paths) b.Add(path);
  root_ = Builder::Freeze(b.root);
}

Projection Projection::Under(const std::string& projected,
                             const std::vector<std::string>& kept_whole) const {
  auto n = std::make_shared<Node>();
  n->members.emplace(projected, root_);
  for (const std::string& key : kept_whole) n->members.emplace(key, KeepAllNode());
  return Projection(std::shared_ptr<const Node>(std::move(n)));
}

json Projection::Parse(std::string_view text) const {
  if (root_->keep_all) return json::parse(text, nullptr, /*allow_exceptions=*/false);
  Filter filter(root_.get());
  return json::parse(
      text,
      [&filter](int depth, json::parse_event_t event, json& parsed) {
        return filter(depth, event, parsed);
      },
      /*allow_exceptions=*/false);
}

}  // namespace wasd::kube
