#include "workloadbuilder/backend.h"

#include "objects/json_util.h"

namespace wasd::workloadbuilder {

namespace {

// clang-format off
constexpr std::array<BackendInfo, 4> kInfos = {{
  {Backend::kNative,       "native",       "scheduling.k8s.io",     "v1beta1",  "podgroups", "PodGroup",
   "",                            true,  "/spec/schedulingPolicy/gang/minCount"},
  {Backend::kVolcano,      "volcano",      "scheduling.volcano.sh", "v1beta1",  "podgroups", "PodGroup",
   "volcano",                     false, "/spec/minMember"},
  {Backend::kKai,          "kai",          "scheduling.run.ai",     "v2alpha2", "podgroups", "PodGroup",
   "kai-scheduler",               false, "/spec/minMember"},
  {Backend::kCoscheduling, "coscheduling", "scheduling.x-k8s.io",   "v1alpha1", "podgroups", "PodGroup",
   "scheduler-plugins-scheduler", false, "/spec/minMember"},
}};
// clang-format on

}  // namespace

const BackendInfo& Info(Backend backend) {
  for (const BackendInfo& info : kInfos) {
    if (info.backend == backend) return info;
  }
  return kInfos[0];
}

std::optional<Backend> ParseBackend(std::string_view name) {
  for (const BackendInfo& info : kInfos) {
    if (info.name == name) return info.backend;
  }
  return std::nullopt;
}

std::string_view BackendName(Backend backend) { return Info(backend).name; }

std::string GroupVersion(Backend backend) {
  const BackendInfo& info = Info(backend);
  std::string out(info.api_group);
  out += '/';
  out += info.api_version;
  return out;
}

std::optional<Backend> BackendOfLabels(const nlohmann::json& labels) {
  const std::string* value = objects::AsString(objects::Member(labels, kBackendLabel));
  if (value == nullptr) return Backend::kNative;
  return ParseBackend(*value);
}

}  // namespace wasd::workloadbuilder
