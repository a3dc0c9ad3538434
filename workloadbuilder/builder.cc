#include "workloadbuilder/builder.h"

#include <string>

#include "objects/json_util.h"
#include "workloadbuilder/names.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

BuildResult Error(std::string message) { return {nullptr, std::move(message)}; }

// Copies `key` of `from` into `to` when present (non-null).
void CopyMember(const json& from, std::string_view key, json& to) {
  if (const json* v = objects::Member(from, key)) to[std::string(key)] = *v;
}

struct ObjectRef {
  const std::string* name = nullptr;
  const std::string* uid = nullptr;
  const std::string* namespace_name = nullptr;
  bool ok() const { return name != nullptr && !name->empty() && uid != nullptr && !uid->empty(); }
};

ObjectRef RefOf(const json& object) {
  ObjectRef ref;
  ref.name = objects::AsString(objects::MemberPath(object, {"metadata", "name"}));
  ref.uid = objects::AsString(objects::MemberPath(object, {"metadata", "uid"}));
  ref.namespace_name = objects::AsString(objects::MemberPath(object, {"metadata", "namespace"}));
  return ref;
}

std::string StringOr(const json& object, std::string_view key, std::string_view fallback) {
  const std::string* s = objects::AsString(objects::Member(object, key));
  return s != nullptr && !s->empty() ? *s : std::string(fallback);
}

json ObjectMeta(const std::string& name, const std::string* namespace_name, json owners) {
  json meta = json::object();
  meta["name"] = name;
  if (namespace_name != nullptr && !namespace_name->empty()) meta["namespace"] = *namespace_name;
  meta["ownerReferences"] = std::move(owners);
  return meta;
}

const json* FindTemplate(const json& workload, std::string_view name) {
  const json* templates = objects::MemberPath(workload, {"spec", "podGroupTemplates"});
  if (templates == nullptr || !templates->is_array()) return nullptr;
  for (const json& t : *templates) {
    const std::string* n = objects::AsString(objects::Member(t, "name"));
    if (n != nullptr && *n == name) return &t;
  }
  return nullptr;
}

}  // namespace

std::optional<std::int64_t> ExplicitMinCount(const json& config) {
  return objects::AsInt(objects::MemberPath(config, {"schedulingPolicy", "gang", "minCount"}));
}

bool IsGang(const json& config) {
  return objects::MemberPath(config, {"schedulingPolicy", "gang"}) != nullptr;
}

std::int64_t ResolveMinCount(const json& config, std::int64_t replicas) {
  if (const auto explicit_count = ExplicitMinCount(config)) return *explicit_count;
  return replicas > 0 ? replicas : 1;
}

BuildResult BuildWorkload(const json& deployment, const json& config, const BuildOptions& options) {
  const ObjectRef owner = RefOf(deployment);
  if (!owner.ok()) {
    return Error(
        "a Workload must be owned by its controller for garbage collection: "
        "the Deployment has no metadata.name or metadata.uid");
  }
  if (!config.is_object()) return Error("the scheduling configuration is not an object");

  const std::string api_version = StringOr(deployment, "apiVersion", "apps/v1");
  const std::string kind = StringOr(deployment, "kind", "Deployment");
  const std::int64_t replicas =
      objects::AsInt(objects::MemberPath(deployment, {"spec", "replicas"})).value_or(1);

  json pgt = json::object();
  pgt["name"] = kPodGroupTemplateName;
  if (IsGang(config)) {
    pgt["schedulingPolicy"] = {{"gang", {{"minCount", ResolveMinCount(config, replicas)}}}};
  } else {
    pgt["schedulingPolicy"] = {{"basic", json::object()}};
  }
  CopyMember(config, "schedulingConstraints", pgt);
  CopyMember(config, "disruptionMode", pgt);
  if (const json* claims = objects::Member(config, "resourceClaims");
      claims != nullptr && !(claims->is_array() && claims->empty())) {
    pgt["resourceClaims"] = *claims;
  }
  if (options.priority_class_name && !options.priority_class_name->empty()) {
    pgt["priorityClassName"] = *options.priority_class_name;
  }

  json owner_ref = {{"apiVersion", api_version}, {"kind", kind},
                    {"name", *owner.name},       {"uid", *owner.uid},
                    {"controller", true},        {"blockOwnerDeletion", true}};
  json workload = json::object();
  workload["apiVersion"] = options.api_version;
  workload["kind"] = "Workload";
  workload["metadata"] = ObjectMeta(GenerateWorkloadName(*owner.name, *owner.uid),
                                    owner.namespace_name, json::array({std::move(owner_ref)}));
  workload["spec"] = {
      {"controllerRef",
       {{"apiGroup", objects::ApiGroupOf(api_version)}, {"kind", kind}, {"name", *owner.name}}},
      {"podGroupTemplates", json::array({std::move(pgt)})}};
  return {std::move(workload), {}};
}

BuildResult BuildPodGroup(const json& workload, const json& replicaset,
                          std::string_view api_version) {
  const ObjectRef rs = RefOf(replicaset);
  if (!rs.ok()) return Error("the ReplicaSet has no metadata.name or metadata.uid");
  const ObjectRef wl = RefOf(workload);
  if (!wl.ok()) return Error("the Workload has no metadata.name or metadata.uid");
  const json* pgt = FindTemplate(workload, kPodGroupTemplateName);
  if (pgt == nullptr) {
    return Error("the Workload has no podGroupTemplate named " +
                 std::string(kPodGroupTemplateName));
  }

  json owners = json::array();
  owners.push_back({{"apiVersion", StringOr(replicaset, "apiVersion", "apps/v1")},
                    {"kind", "ReplicaSet"},
                    {"name", *rs.name},
                    {"uid", *rs.uid},
                    {"controller", true},
                    {"blockOwnerDeletion", true}});
  owners.push_back(
      {{"apiVersion", api_version}, {"kind", "Workload"}, {"name", *wl.name}, {"uid", *wl.uid}});

  json spec = json::object();
  spec["workloadRef"] = {{"workloadName", *wl.name}, {"templateName", kPodGroupTemplateName}};
  for (std::string_view key : {"schedulingPolicy", "schedulingConstraints", "disruptionMode",
                               "priorityClassName", "priority", "resourceClaims"}) {
    CopyMember(*pgt, key, spec);
  }

  json podgroup = json::object();
  podgroup["apiVersion"] = api_version;
  podgroup["kind"] = "PodGroup";
  podgroup["metadata"] = ObjectMeta(
      PodGroupName(*rs.name, *rs.uid),
      rs.namespace_name != nullptr ? rs.namespace_name : wl.namespace_name, std::move(owners));
  podgroup["spec"] = std::move(spec);
  return {std::move(podgroup), {}};
}

}  // namespace wasd::workloadbuilder
