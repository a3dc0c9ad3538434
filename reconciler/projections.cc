#include "reconciler/projections.h"

#include <initializer_list>

#include "doctor/reads.h"
#include "planner/reads.h"

namespace wasd::reconciler {

namespace {

using base::JsonPaths;

// Every object: what the caches, the controller and the Events read.
//   name, namespace        the caches' keys
//   uid                    owner checks (caches)
//   resourceVersion        RecentWrites::Resolve, the Events' involvedObject,
//                          the informer's relist comparison
//   deletionTimestamp      IsTerminating (caches, controller, gang_status)
JsonPaths Identity() {
  return {{"metadata", "name"},
          {"metadata", "namespace"},
          {"metadata", "uid"},
          {"metadata", "resourceVersion"},
          {"metadata", "deletionTimestamp"}};
}

// The identity and the read sets of the readers of one kind of object.
std::shared_ptr<const base::JsonProjection> Make(std::initializer_list<JsonPaths> read_sets) {
  JsonPaths paths = Identity();
  for (const JsonPaths& reads : read_sets) base::AppendPaths(&paths, reads);
  return std::make_shared<const base::JsonProjection>(paths);
}

}  // namespace

std::shared_ptr<const base::JsonProjection> DeploymentProjection() {
  static const auto p = Make({planner::DeploymentReads(),
                              // The gang doctor's condition (gang_status.cc): the GangScheduled
                              // condition it compares with (zero writes when equal) and its
                              // lastTransitionTime; the other conditions are kept too (the
                              // patch's index of the entry it replaces).
                              {{"status", "conditions"}}});
  return p;
}

std::shared_ptr<const base::JsonProjection> UnadmittedDeploymentProjection() {
  static const auto p = Make({{{"metadata", "annotations", "wasd.io/scheduling"}}});
  return p;
}

std::shared_ptr<const base::JsonProjection> ReplicaSetProjection() {
  static const auto p = Make({planner::ReplicaSetReads(), doctor::ReplicaSetReads()});
  return p;
}

std::shared_ptr<const base::JsonProjection> PodProjection() {
  static const auto p = Make({planner::PodReads(),
                              doctor::PodReads(),
                              // The oldest gated pod's age (caches.cc TrackGated).
                              {{"metadata", "creationTimestamp"}}});
  return p;
}

std::shared_ptr<const base::JsonProjection> SchedulingObjectProjection() {
  static const auto p = Make({planner::SchedulingObjectReads(), doctor::SchedulingObjectReads()});
  return p;
}

std::shared_ptr<const base::JsonProjection> NodeProjection() {
  static const auto p = Make({doctor::NodeReads()});
  return p;
}

std::shared_ptr<const base::JsonProjection> BoundPodProjection() {
  static const auto p = Make({doctor::BoundPodReads()});
  return p;
}

}  // namespace wasd::reconciler
