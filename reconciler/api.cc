#include "reconciler/api.h"

#include <string>

namespace wasd::reconciler {

kube::Resource Workloads(const SchedulingApi& api) { return api.Workloads(); }
kube::Resource PodGroups(const SchedulingApi& api) { return api.PodGroups(); }
kube::Resource PriorityClasses() { return {"scheduling.k8s.io/v1", "priorityclasses", false}; }

kube::Resource GroupResource(workloadbuilder::Backend backend, const SchedulingApi& api) {
  if (backend == workloadbuilder::Backend::kNative) return api.PodGroups();
  const workloadbuilder::BackendInfo& info = workloadbuilder::Info(backend);
  return {workloadbuilder::GroupVersion(backend), std::string(info.resource)};
}

base::Result<nlohmann::json> Api::CreateEncoded(const kube::Resource& r, std::string_view ns,
                                                const std::string& body) {
  nlohmann::json object = nlohmann::json::parse(body, nullptr, false);
  if (object.is_discarded()) {
    return base::Status::Error(base::Status::Kind::kInvalidArgument,
                               "create " + r.plural + ": the body is not JSON");
  }
  return Create(r, ns, object);
}

}  // namespace wasd::reconciler
