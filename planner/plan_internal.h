// Internal to the planner (plan.cc, plan_podgroups.cc): shared helpers and
// the PodGroup/gate step. Not for other callers. Pure; thread-safe.
#ifndef WASD_PLANNER_PLAN_INTERNAL_H_
#define WASD_PLANNER_PLAN_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/plan.h"

namespace wasd::planner::internal {

void AddEvent(Plan& plan, std::string_view type, std::string_view reason, std::string message);
// Adds one RequeueAfter (the first delay wins).
void AddRequeue(Plan& plan, std::chrono::milliseconds delay);
// Non-null objects of `objects`, ordered by name (stable).
std::vector<const nlohmann::json*> SortedByName(const std::vector<objects::Object>& list);

// Lifts wasd's gate from every live pod of `rs` (one action each).
void AddLiftGates(const PlanInput& in, const nlohmann::json& rs, Plan& plan);
// What ReleaseAllGates planned.
struct Release {
  std::size_t lifted = 0;            // gates lifted
  std::vector<std::string> created;  // "PodGroup x" / "scheduling.run.ai PodGroup x" created first
  std::vector<std::string> missing;  // group names the pods keep naming that wasd cannot create
};
// Q15: the Deployment has no usable scheduling configuration: lifts wasd's
// gate from every pod of its ReplicaSets. The pods name their ReplicaSet's
// group, and every scheduler holds a pod whose group does not exist, so a
// missing one is created first (BuildReleaseGroup: no gang, each pod on its
// own); sets plan.backend.
Release ReleaseAllGates(const PlanInput& in, const nlohmann::json& deployment, Plan& plan);

// Step 2 and 3 of plan.h. `workload` is our Workload as it will be once the
// plan's Workload patch (if any) is applied; `min_count` its gang minCount
// (nullopt for the basic policy); `missing_claims` the intent's resourceClaims
// the stored Workload lacks (a ClaimsStripped Warning with each PodGroup
// create).
void PlanPodGroups(const PlanInput& in, const nlohmann::json& deployment,
                   const nlohmann::json& workload, std::optional<std::int64_t> min_count,
                   const std::vector<std::string>& missing_claims, Plan& plan);

// Steps 2 and 3 for a non-native `backend` (no Workload): one group object
// per active ReplicaSet, compiled from `config` with in.facts.
void PlanBackendGroups(const PlanInput& in, const nlohmann::json& deployment,
                       const nlohmann::json& config, workloadbuilder::Backend backend, Plan& plan);

}  // namespace wasd::planner::internal

#endif  // WASD_PLANNER_PLAN_INTERNAL_H_
