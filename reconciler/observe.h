// The gang doctor's observation seam: what it reads of one Deployment, and
// the one function that turns that into the doctor's input.
//
// Two sources feed it, and both end in GangViewOf, so the doctor sees one
// object graph whatever read it and cmd/ never walks that graph:
//   the reconciler  Caches::Assemble: its informers' objects, borrowed
//                   (GangStatus::Update);
//   wasd explain    ObserveLive: the same objects read from the API server
//                   (the Deployment, its ReplicaSets and their pods, the
//                   backend's group objects in the namespace, the native
//                   Workload), plus what the reconciler reads only on
//                   demand: the FailedScheduling Events, the Nodes and the
//                   pods bound to them (the fit preview).
//
// The graph in both: ReplicaSets whose controller is the Deployment (UID),
// pods whose controller is one of those ReplicaSets, the Workload named
// GenerateWorkloadName(deployment), and the group objects (the doctor picks
// the one named PodGroupName of the current ReplicaSet).
#ifndef WASD_RECONCILER_OBSERVE_H_
#define WASD_RECONCILER_OBSERVE_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "doctor/diagnosis.h"
#include "kube/client.h"
#include "planner/plan.h"
#include "reconciler/scheduling_api.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::reconciler {

// The doctor's view of `observed` (which, and `facts`, must outlive it):
// borrowed, nothing copied. `api_served`: the backend's group API is served.
// Events, Nodes and bound pods are the caller's to add.
doctor::GangView GangViewOf(const planner::PlanInput& observed, bool api_served,
                            const workloadbuilder::ClusterFacts* facts);

// What ObserveLive read.
struct LiveObservation {
  planner::PlanInput objects;  // deployment, replicasets, pods, podgroups, workloads
  bool api_served = true;
  std::optional<SchedulingDiscovery> discovery;  // native backend only
  std::vector<nlohmann::json> events;            // FailedScheduling Events of the namespace
  std::vector<nlohmann::json> nodes;             // empty: no fit preview
  std::vector<nlohmann::json> bound_pods;
  // Reads the diagnosis can do without that failed ("no fit preview: ...").
  std::vector<std::string> notes;

  // GangViewOf(objects) with the Events, Nodes and bound pods added.
  doctor::GangView View() const;
};

// Why ObserveLive stopped: `what` ("reading deployment ns/name"), and the
// API server's answer; an OK `cause` means `what` says it all (not found,
// not opted in).
struct ObserveFailure {
  std::string what;
  base::Status cause;
  std::string ToString() const;  // "what: why" (kube::Why)
};

// Reads Deployment ns/name and its gang from the API server. Nothing is
// written. `facts` goes into objects.facts.
std::optional<ObserveFailure> ObserveLive(kube::Client& client, const std::string& ns,
                                          const std::string& name,
                                          const kube::RequestOptions& options,
                                          const workloadbuilder::ClusterFacts& facts,
                                          LiveObservation* out);

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_OBSERVE_H_
