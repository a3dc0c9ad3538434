// The reconciler's names for kube/scheduling_api.h (the discovery of the
// scheduling.k8s.io version, shared with the webhook and the CLI).
#ifndef WASD_RECONCILER_SCHEDULING_API_H_
#define WASD_RECONCILER_SCHEDULING_API_H_

#include "kube/scheduling_api.h"

namespace wasd::reconciler {

using kube::DescribeDiscovery;
using kube::DiscoverSchedulingApi;
using kube::GroupVersionGetter;
using kube::kSchedulingGroup;
using kube::kSchedulingVersions;
using kube::ListsWorkloadsAndPodGroups;
using kube::SchedulingApi;
using kube::SchedulingDiscovery;

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_SCHEDULING_API_H_
