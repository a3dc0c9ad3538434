#include "reconciler/api.h"

#include <string>

namespace wasd::reconciler {

kube::Resource Workloads() { return {"scheduling.k8s.io/v1beta1", "workloads"}; }
kube::Resource PodGroups() { return {"scheduling.k8s.io/v1beta1", "podgroups"}; }
kube::Resource PriorityClasses() { return {"scheduling.k8s.io/v1", "priorityclasses", false}; }

kube::Resource GroupResource(workloadbuilder::Backend backend) {
  const workloadbuilder::BackendInfo& info = workloadbuilder::Info(backend);
  return {workloadbuilder::GroupVersion(backend), std::string(info.resource)};
}

}  // namespace wasd::reconciler
