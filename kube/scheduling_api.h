// SchedulingApi: which version of scheduling.k8s.io serves Workloads and
// PodGroups on this cluster, found by discovery and never assumed.
//
// Kubernetes 1.37 serves the two kinds as scheduling.k8s.io/v1beta1; the GA
// version v1 is planned for 1.38, where beta APIs are off by default, so a
// cluster may serve v1 only, v1beta1 only, or both (two views of the same
// stored objects: one name, uid and resourceVersion; only apiVersion
// differs). wasd asks the API server (GET /apis/scheduling.k8s.io/v1 and
// /v1beta1, the resource lists) and uses the first version in preference
// order (v1, then v1beta1) that lists both `workloads` and `podgroups`.
//
// Every reader and writer of Workloads and PodGroups (the reconciler, the
// gang doctor, `wasd explain`, `wasd selftest`) takes the chosen value and
// builds its resources and apiVersion strings from it; nothing else in wasd
// names a scheduling.k8s.io version for these kinds. The webhook asks the
// same question to choose a native pod's hold (docs/design.md Q23).
//
// Pure values and functions; DiscoverSchedulingApi does I/O through the
// getter it is given. Thread-safe.
#ifndef WASD_KUBE_SCHEDULING_API_H_
#define WASD_KUBE_SCHEDULING_API_H_

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kube/resource.h"

namespace wasd::kube {

inline constexpr std::string_view kSchedulingGroup = "scheduling.k8s.io";
// Preference order: GA first.
inline constexpr std::array<std::string_view, 2> kSchedulingVersions = {"v1", "v1beta1"};

// The version in use; empty when neither version serves both kinds.
struct SchedulingApi {
  std::string version;  // "v1", "v1beta1" or ""

  bool served() const { return !version.empty(); }
  // "scheduling.k8s.io/v1" (the apiVersion of objects written through it).
  std::string GroupVersion() const;
  Resource Workloads() const;
  Resource PodGroups() const;
  bool operator==(const SchedulingApi&) const = default;
};

// The APIResourceList `resource_list` (a discovery answer) names both
// `workloads` and `podgroups` (the resources themselves, not a subresource
// such as podgroups/status). Pure.
bool ListsWorkloadsAndPodGroups(const nlohmann::json& resource_list);

// What discovery found.
struct SchedulingDiscovery {
  SchedulingApi api;                // the preferred serving version ("" none)
  std::vector<std::string> served;  // every version serving both kinds, in preference order
  base::Status error;               // a version could not be asked (not a 404): api unknown
  bool ok() const { return error.ok(); }
};

// GET of one group version's resource list ("scheduling.k8s.io/v1").
using GroupVersionGetter = std::function<base::Result<nlohmann::json>(std::string_view)>;

// Asks for each version of kSchedulingVersions. A 404 means that version is
// not served; any other failure makes the result an error (the caller keeps
// what it knew: a flaky API server must not look like an API removal).
SchedulingDiscovery DiscoverSchedulingApi(const GroupVersionGetter& get);

// "v1 (also served: v1beta1)", "v1beta1", "none" — for logs and `explain`.
std::string DescribeDiscovery(const SchedulingDiscovery& d);

}  // namespace wasd::kube

#endif  // WASD_KUBE_SCHEDULING_API_H_
