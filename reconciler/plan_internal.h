// Internal to the planner (plan.cc, plan_podgroups.cc): shared helpers and
// the PodGroup/gate step. Not for other callers. Pure; thread-safe.
#ifndef WASD_RECONCILER_PLAN_INTERNAL_H_
#define WASD_RECONCILER_PLAN_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reconciler/plan.h"

namespace wasd::reconciler::internal {

void AddEvent(Plan& plan, std::string_view type, std::string_view reason, std::string message);
// Adds one RequeueAfter (the first delay wins).
void AddRequeue(Plan& plan, std::chrono::milliseconds delay);
// Non-null objects of `objects`, ordered by name (stable).
std::vector<const nlohmann::json*> SortedByName(const std::vector<Object>& objects);

// Step 2 and 3 of plan.h. `workload` is our Workload as it will be once the
// plan's Workload patch (if any) is applied; `min_count` its gang minCount
// (nullopt for the basic policy).
void PlanPodGroups(const PlanInput& in, const nlohmann::json& deployment,
                   const nlohmann::json& workload, std::optional<std::int64_t> min_count,
                   Plan& plan);

}  // namespace wasd::reconciler::internal

#endif  // WASD_RECONCILER_PLAN_INTERNAL_H_
