// Projection: which members of an object a cache keeps, applied while the
// JSON text is parsed, so the dropped members (managedFields, containers,
// status, the last-applied annotation, …) are scanned and never built.
//
// A projection is a tree of member names from the object's root:
//
//   kube::Projection p({{"metadata", "name"},
//                       {"metadata", "labels"},               // every label
//                       {"metadata", "annotations", "wasd.io/scheduling"},
//                       {"spec", "schedulingGates"}});        // the whole array
//   nlohmann::json pod = p.Parse(text);                       // discarded on bad JSON
//
// A path that ends keeps the whole value at its end. Arrays are transparent:
// a path through an array applies to each element ({"metadata",
// "ownerReferences", "uid"} keeps only the uid of each owner reference).
// "*" as a member name matches every member at that level. A member name
// "name[key=value]" keeps, of the array at `name`, only the elements that
// are objects whose member `key` is the string `value` ({"status",
// "conditions[type=PodScheduled]"} keeps one condition of a pod's five);
// a path may go on below it. The text is
// validated exactly as nlohmann::json::parse validates it (the same parser
// runs, with a callback that refuses unlisted members).
//
// Under(key) wraps a projection for the same objects one level down: a list
// body keeps `items` (projected) and `metadata`; a watch event line keeps
// `type` and `object` (projected).
//
// Immutable after construction; thread-safe to share.
#ifndef WASD_KUBE_PROJECTION_H_
#define WASD_KUBE_PROJECTION_H_

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace wasd::kube {

class Projection {
 public:
  struct Node {
    bool keep_all = false;  // the whole value below here
    std::map<std::string, std::shared_ptr<const Node>, std::less<>> members;
    std::shared_ptr<const Node> any;  // "*"
    // "name[key=value]": as an array's node, the elements kept (key, value).
    std::optional<std::pair<std::string, std::string>> where;
  };

  // Keeps everything (the identity projection).
  Projection();
  explicit Projection(const std::vector<std::vector<std::string>>& paths);

  // {key_1: <this>, key_2: <everything>, ...}: this projection one level
  // down under `projected`, and `kept_whole` members kept in full.
  Projection Under(const std::string& projected,
                   const std::vector<std::string>& kept_whole = {}) const;

  bool keeps_all() const { return root_->keep_all; }

  // Parses `text` keeping only the projected members. Returns a discarded
  // value (is_discarded()) when the text is not valid JSON.
  nlohmann::json Parse(std::string_view text) const;
  // The same projection of a value already decoded (e.g. a write's answer).
  nlohmann::json Project(const nlohmann::json& value) const;

 private:
  explicit Projection(std::shared_ptr<const Node> root) : root_(std::move(root)) {}
  std::shared_ptr<const Node> root_;
};

}  // namespace wasd::kube

#endif  // WASD_KUBE_PROJECTION_H_
