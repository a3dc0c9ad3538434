#include "reconciler/api.h"

namespace wasd::reconciler {

kube::Resource Workloads() { return {"scheduling.k8s.io/v1beta1", "workloads"}; }
kube::Resource PodGroups() { return {"scheduling.k8s.io/v1beta1", "podgroups"}; }
kube::Resource PriorityClasses() { return {"scheduling.k8s.io/v1", "priorityclasses", false}; }

}  // namespace wasd::reconciler
