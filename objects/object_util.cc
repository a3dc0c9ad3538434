#include "objects/object_util.h"

#include "objects/json_util.h"

namespace wasd::objects {

using nlohmann::json;
using objects::AsInt;
using objects::AsString;
using objects::Member;
using objects::MemberPath;

namespace {

std::string MetaString(const json& object, std::string_view key) {
  const std::string* s = AsString(MemberPath(object, {"metadata", key}));
  return s != nullptr ? *s : std::string();
}

std::string RefString(const json* ref, std::string_view key) {
  if (ref == nullptr) return {};
  const std::string* s = AsString(Member(*ref, key));
  return s != nullptr ? *s : std::string();
}

}  // namespace

std::string NameOf(const json& object) { return MetaString(object, "name"); }
std::string NamespaceOf(const json& object) { return MetaString(object, "namespace"); }
std::string UidOf(const json& object) { return MetaString(object, "uid"); }
std::string ResourceVersionOf(const json& object) { return MetaString(object, "resourceVersion"); }

bool IsTerminating(const json& object) {
  return MemberPath(object, {"metadata", "deletionTimestamp"}) != nullptr;
}

const json* ControllerRef(const json& object) {
  const json* refs = MemberPath(object, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array()) return nullptr;
  for (const json& ref : *refs) {
    const json* controller = Member(ref, "controller");
    if (controller != nullptr && controller->is_boolean() && controller->get<bool>()) return &ref;
  }
  return nullptr;
}

std::string ControllerUid(const json& object) { return RefString(ControllerRef(object), "uid"); }
std::string ControllerKind(const json& object) { return RefString(ControllerRef(object), "kind"); }
std::string ControllerName(const json& object) { return RefString(ControllerRef(object), "name"); }

OwnerRefAt FindOwnerRef(const json& object, std::string_view kind) {
  const json* refs = MemberPath(object, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array()) return {};
  for (std::size_t i = 0; i < refs->size(); ++i) {
    const std::string* k = AsString(Member((*refs)[i], "kind"));
    if (k != nullptr && *k == kind) return {&(*refs)[i], i};
  }
  return {};
}

std::int64_t ReplicasOf(const json& object) {
  return AsInt(MemberPath(object, {"spec", "replicas"})).value_or(1);
}

std::optional<std::size_t> GateIndex(const json& pod, std::string_view gate) {
  const json* gates = MemberPath(pod, {"spec", "schedulingGates"});
  if (gates == nullptr || !gates->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < gates->size(); ++i) {
    const std::string* name = AsString(Member((*gates)[i], "name"));
    if (name != nullptr && *name == gate) return i;
  }
  return std::nullopt;
}

bool NeverScheduled(const json& pod) {
  const std::string* node = AsString(MemberPath(pod, {"spec", "nodeName"}));
  if (node != nullptr && !node->empty()) return false;
  const json* conditions = MemberPath(pod, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return true;
  for (const json& c : *conditions) {
    const std::string* type = AsString(Member(c, "type"));
    const std::string* status = AsString(Member(c, "status"));
    if (type != nullptr && *type == "PodScheduled" && status != nullptr && *status == "True") {
      return false;
    }
  }
  return true;
}

std::optional<std::int64_t> GangMinCount(const json& policy_holder) {
  return AsInt(MemberPath(policy_holder, {"schedulingPolicy", "gang", "minCount"}));
}

std::string Key(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  key.append(ns).append("/").append(name);
  return key;
}

bool SplitKey(std::string_view key, std::string* ns, std::string* name) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return false;
  *ns = std::string(key.substr(0, slash));
  *name = std::string(key.substr(slash + 1));
  return true;
}

std::string StripHashSuffix(std::string_view name) {
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return {};
  return std::string(name.substr(0, dash));
}

}  // namespace wasd::objects
