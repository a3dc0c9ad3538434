// What each of the reconciler's caches keeps of the objects it watches: the
// members its readers read — nothing else. Real pods are 10–25 KB of JSON
// (managedFields, containers, volumes, status); the reconciler needs ~1 KB
// of it. Each reader declares its read set beside its code: the planner in
// planner/reads.h, the gang doctor in doctor/reads.h, the reconciler's own
// (the caches' keys, the Events, the gang status condition) in
// projections.cc, which composes them per kind of object. To keep another
// field, add its path to the read set of the code that reads it.
//
// A new informer registers its own projection here (and a test in
// tests/reconciler/projections_test.cc proves its readers' inputs survive).
#ifndef WASD_RECONCILER_PROJECTIONS_H_
#define WASD_RECONCILER_PROJECTIONS_H_

#include <memory>

#include "base/json_projection.h"

namespace wasd::reconciler {

std::shared_ptr<const base::JsonProjection> DeploymentProjection();
// An unmarked Deployment: its identity and the annotation wasd.io/scheduling
// (Caches::CountNotAdmitted).
std::shared_ptr<const base::JsonProjection> UnadmittedDeploymentProjection();
std::shared_ptr<const base::JsonProjection> ReplicaSetProjection();
std::shared_ptr<const base::JsonProjection> PodProjection();
// Workloads and PodGroups (objects wasd writes: small, compared whole).
std::shared_ptr<const base::JsonProjection> SchedulingObjectProjection();
// The gang doctor's fit preview (only with --gang-status): Nodes, and every
// pod bound to a node in any namespace.
std::shared_ptr<const base::JsonProjection> NodeProjection();
std::shared_ptr<const base::JsonProjection> BoundPodProjection();

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_PROJECTIONS_H_
