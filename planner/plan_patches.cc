// The JSON patches and small helpers of the plan (see plan.h).
#include <string>

#include "objects/json_util.h"
#include "planner/plan.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner {

using nlohmann::json;
using objects::AsString;
using objects::Member;
using objects::MemberPath;

namespace {

json TestUid(std::string_view uid) {
  return {{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid}};
}

// `api_version`: the version in use, never the cached Workload's own
// apiVersion (it says only through which version it was read).
json WorkloadOwnerRef(const json& workload, std::string_view api_version) {
  return {{"apiVersion", api_version},
          {"kind", "Workload"},
          {"name", objects::NameOf(workload)},
          {"uid", objects::UidOf(workload)}};
}

}  // namespace

json RemoveFinalizerPatch(std::string_view uid, std::size_t index, std::string_view finalizer) {
  const std::string at = "/metadata/finalizers/" + std::to_string(index);
  return json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid}},
                      {{"op", "test"}, {"path", at}, {"value", finalizer}},
                      {{"op", "remove"}, {"path", at}}});
}

json WorkloadMinCountPatch(std::string_view uid, std::size_t template_index,
                           std::int64_t min_count) {
  return json::array({TestUid(uid),
                      {{"op", "replace"},
                       {"path", "/spec/podGroupTemplates/" + std::to_string(template_index) +
                                    "/schedulingPolicy/gang/minCount"},
                       {"value", min_count}}});
}

json PodGroupMinCountPatch(std::string_view uid, std::int64_t min_count, std::string_view pointer) {
  return json::array(
      {TestUid(uid), {{"op", "replace"}, {"path", std::string(pointer)}, {"value", min_count}}});
}

json PodGroupOwnerPatch(const json& podgroup, const json& workload, std::string_view api_version) {
  json patch = json::array({TestUid(objects::UidOf(podgroup))});
  const objects::OwnerRefAt existing = objects::FindOwnerRef(podgroup, "Workload");
  if (existing.ref != nullptr) {
    const std::string path = "/metadata/ownerReferences/" + std::to_string(existing.index);
    const std::string* old_uid = AsString(Member(*existing.ref, "uid"));
    patch.push_back({{"op", "test"}, {"path", path + "/kind"}, {"value", "Workload"}});
    if (old_uid != nullptr) {
      patch.push_back({{"op", "test"}, {"path", path + "/uid"}, {"value", *old_uid}});
    }
    patch.push_back(
        {{"op", "replace"}, {"path", path}, {"value", WorkloadOwnerRef(workload, api_version)}});
    return patch;
  }
  const json* refs = MemberPath(podgroup, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array()) {
    patch.push_back({{"op", "add"},
                     {"path", "/metadata/ownerReferences"},
                     {"value", json::array({WorkloadOwnerRef(workload, api_version)})}});
  } else {
    patch.push_back({{"op", "add"},
                     {"path", "/metadata/ownerReferences/-"},
                     {"value", WorkloadOwnerRef(workload, api_version)}});
  }
  return patch;
}

json PodGroupAdoptPatch(const json& podgroup, const json& replicaset) {
  json patch = json::array({TestUid(objects::UidOf(podgroup))});
  const json* refs = MemberPath(podgroup, {"metadata", "ownerReferences"});
  const json rs_ref = {{"apiVersion", "apps/v1"},
                       {"kind", "ReplicaSet"},
                       {"name", objects::NameOf(replicaset)},
                       {"uid", objects::UidOf(replicaset)},
                       {"controller", true},
                       {"blockOwnerDeletion", true}};
  if (refs != nullptr && refs->is_array()) {
    for (std::size_t i = 0; i < refs->size(); ++i) {
      const json* controller = Member((*refs)[i], "controller");
      if (controller == nullptr || !controller->is_boolean() || !controller->get<bool>()) continue;
      const std::string path = "/metadata/ownerReferences/" + std::to_string(i);
      const std::string* old_uid = AsString(Member((*refs)[i], "uid"));
      if (old_uid != nullptr)
        patch.push_back({{"op", "test"}, {"path", path + "/uid"}, {"value", *old_uid}});
      patch.push_back({{"op", "replace"}, {"path", path}, {"value", rs_ref}});
      return patch;
    }
    patch.push_back({{"op", "add"}, {"path", "/metadata/ownerReferences/0"}, {"value", rs_ref}});
    return patch;
  }
  patch.push_back(
      {{"op", "add"}, {"path", "/metadata/ownerReferences"}, {"value", json::array({rs_ref})}});
  return patch;
}

json LiftGatePatch(std::size_t gate_index) {
  const std::string path = "/spec/schedulingGates/" + std::to_string(gate_index);
  return json::array(
      {{{"op", "test"}, {"path", path + "/name"}, {"value", workloadbuilder::kPodGroupGate}},
       {{"op", "remove"}, {"path", path}}});
}

std::vector<std::string> StrippedClaims(const json& sent, const json& stored) {
  std::vector<std::string> stripped;
  const json* sent_claims = MemberPath(sent, {"spec", "resourceClaims"});
  if (sent_claims == nullptr || !sent_claims->is_array()) return stripped;
  const json* stored_claims = MemberPath(stored, {"spec", "resourceClaims"});
  for (const json& claim : *sent_claims) {
    const std::string* name = AsString(Member(claim, "name"));
    if (name == nullptr) continue;
    bool kept = false;
    if (stored_claims != nullptr && stored_claims->is_array()) {
      for (const json& s : *stored_claims) {
        const std::string* n = AsString(Member(s, "name"));
        if (n != nullptr && *n == *name) {
          kept = true;
          break;
        }
      }
    }
    if (!kept) stripped.push_back(*name);
  }
  return stripped;
}

}  // namespace wasd::planner
