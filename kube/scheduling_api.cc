#include "kube/scheduling_api.h"

namespace wasd::kube {

using nlohmann::json;

std::string SchedulingApi::GroupVersion() const {
  return std::string(kSchedulingGroup) + "/" + version;
}

Resource SchedulingApi::Workloads() const { return {GroupVersion(), "workloads"}; }

Resource SchedulingApi::PodGroups() const { return {GroupVersion(), "podgroups"}; }

bool ListsWorkloadsAndPodGroups(const json& resource_list) {
  if (!resource_list.is_object()) return false;
  const auto resources = resource_list.find("resources");
  if (resources == resource_list.end() || !resources->is_array()) return false;
  bool workloads = false;
  bool podgroups = false;
  for (const json& r : *resources) {
    if (!r.is_object()) continue;
    const auto name = r.find("name");
    if (name == r.end() || !name->is_string()) continue;
    const std::string& n = name->get_ref<const std::string&>();
    workloads = workloads || n == "workloads";
    podgroups = podgroups || n == "podgroups";
  }
  return workloads && podgroups;
}

SchedulingDiscovery DiscoverSchedulingApi(const GroupVersionGetter& get) {
  SchedulingDiscovery d;
  for (const std::string_view version : kSchedulingVersions) {
    const std::string gv = std::string(kSchedulingGroup) + "/" + std::string(version);
    base::Result<json> answer = get(gv);
    if (!answer.ok()) {
      if (answer.status().not_found()) continue;
      d.error = base::Status::Error(answer.status().kind(),
                                    "discovery of " + gv + ": " + answer.status().ToString());
      d.api = {};
      d.served.clear();
      return d;
    }
    if (!ListsWorkloadsAndPodGroups(answer.value())) continue;
    d.served.emplace_back(version);
    if (!d.api.served()) d.api.version = std::string(version);
  }
  return d;
}

std::string DescribeDiscovery(const SchedulingDiscovery& d) {
  if (!d.ok()) return "unknown (" + d.error.message() + ")";
  if (!d.api.served()) return "none";
  std::string out = d.api.version;
  std::string others;
  for (const std::string& v : d.served) {
    if (v != d.api.version) others += (others.empty() ? "" : ", ") + v;
  }
  if (!others.empty()) out += " (also served: " + others + ")";
  return out;
}

}  // namespace wasd::kube
