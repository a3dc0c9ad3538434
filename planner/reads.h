// What the planner reads of the objects it plans from (planner/*.cc and
// workloadbuilder's BuildWorkload / BuildPodGroup it calls), as read sets
// for the reconciler's informers: a cache keeps these members and drops
// the rest (reconciler/projections.cc composes every reader's read set).
// A planner function that starts reading another member adds its path
// here; tests/reconciler/projections_test.cc runs the planner on pruned
// and whole objects and fails when one is missing. Paths as in
// base/json_projection.h. Pure; thread-safe.
#ifndef WASD_PLANNER_READS_H_
#define WASD_PLANNER_READS_H_

#include "base/json_projection.h"

namespace wasd::planner {

base::JsonPaths DeploymentReads();
base::JsonPaths ReplicaSetReads();
base::JsonPaths PodReads();
// Workloads and PodGroups (objects wasd writes: small, compared whole).
base::JsonPaths SchedulingObjectReads();

}  // namespace wasd::planner

#endif  // WASD_PLANNER_READS_H_
