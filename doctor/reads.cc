#include "doctor/reads.h"

namespace wasd::doctor {

using base::JsonPaths;

JsonPaths ReplicaSetReads() {
  return {{"metadata", "creationTimestamp"},
          {"metadata", "annotations", "deployment.kubernetes.io/revision"},
          {"spec", "template", "spec", "containers", "resources", "requests"},
          {"spec", "template", "spec", "initContainers", "resources", "requests"},
          {"spec", "template", "spec", "overhead"},
          {"spec", "template", "spec", "nodeSelector"},
          {"spec", "template", "spec", "tolerations"}};
}

JsonPaths PodReads() {
  // PodScheduled False/Unschedulable and its message, and the timeline:
  // the only condition read; a running pod's other four would triple the
  // cached pod.
  return {{"metadata", "creationTimestamp"},
          {"status", "conditions[type=PodScheduled]"},
          {"status", "startTime"}};
}

// The status, and when the group was made (bound_before_group).
JsonPaths SchedulingObjectReads() { return {{"status"}, {"metadata", "creationTimestamp"}}; }

JsonPaths NodeReads() {
  // Topology domain and nodeSelector, taints, cordon, free capacity.
  return {{"metadata", "name"},
          {"metadata", "labels"},
          {"spec", "taints"},
          {"spec", "unschedulable"},
          {"status", "allocatable"}};
}

JsonPaths BoundPodReads() {
  // What each bound pod takes from its node (PodRequests: containers, init
  // containers, overhead), while it is not finished.
  return {{"spec", "nodeName"},
          {"spec", "containers", "resources", "requests"},
          {"spec", "initContainers", "resources", "requests"},
          {"spec", "overhead"},
          {"status", "phase"}};
}

}  // namespace wasd::doctor
