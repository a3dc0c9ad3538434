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

// Lifts wasd's gate from the live pods of `rs` (one action each). With
// `group` set (the gang path), only from pods that name that group: a gated
// pod that names none (kube-apiserver dropped its spec.schedulingGroup, the
// GenericWorkload gate was off when it was created) or another one keeps
// the gate, since lifting it would schedule the pod outside its gang, and a
// MemberUnlinked Warning names those pods and the fix. Empty `group` (a
// release): every gate.
void AddLiftGates(const PlanInput& in, const nlohmann::json& rs, Plan& plan,
                  std::string_view group = {});
// What ReleaseAllGates planned.
struct Release {
  std::size_t lifted = 0;  // gates lifted
  // Pods that name a missing group and carry no gate: their scheduler holds
  // them until the group exists (scheduler hold, docs/design.md Q23).
  std::size_t held = 0;
  std::vector<std::string> created;  // "PodGroup x" / "scheduling.run.ai PodGroup x" created first
  std::vector<std::string> missing;  // group names the pods keep naming that wasd cannot create
  bool any() const { return lifted > 0 || held > 0 || !created.empty() || !missing.empty(); }
};
// Q15: the Deployment has no usable scheduling configuration, so no gang
// group will come: releases the pods of its ReplicaSets. Release is by link,
// not by gate: for each ReplicaSet whose live pods name its group (the
// webhook linked them, gated or not) while the group does not exist, the
// group is created first (BuildReleaseGroup: no gang, each pod on its own),
// since every scheduler holds a pod whose group is missing; then wasd's gate
// is lifted from every pod that carries it. Sets plan.backend.
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
