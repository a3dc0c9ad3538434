// What the gang doctor (doctor/diagnosis.cc, doctor/fit.cc) reads of the
// objects beyond what the planner reads (planner/reads.h), as read sets for
// the reconciler's informers (reconciler/projections.cc composes them).
// A doctor function that starts reading another member adds its path here.
// Paths as in base/json_projection.h. Pure; thread-safe.
#ifndef WASD_DOCTOR_READS_H_
#define WASD_DOCTOR_READS_H_

#include "base/json_projection.h"

namespace wasd::doctor {

// The current ReplicaSet (highest revision, then newest) and one member's
// requests and placement rules for the fit preview.
base::JsonPaths ReplicaSetReads();
// What the scheduler said of a pod, and the timeline.
base::JsonPaths PodReads();
// Workloads and PodGroups: the backend's verdict.
base::JsonPaths SchedulingObjectReads();
// The fit preview (only with --gang-status): Nodes, and every pod bound to
// a node in any namespace.
base::JsonPaths NodeReads();
base::JsonPaths BoundPodReads();

}  // namespace wasd::doctor

#endif  // WASD_DOCTOR_READS_H_
