// PlanRounds: one reconcile of one Deployment once the controller's own
// checks passed (caches synced, this replica leads, the scheduling API is
// served): up to kMaxPlanRounds rounds of observe → plan → execute, until a
// plan is empty or complete.
//
// A new Deployment takes two rounds: the Workload first, then, once its UID
// is known, the PodGroups and gate lifts (planner/plan.h step 1). An answer
// that changed what we know (AlreadyExists, a failed `test`, a precondition)
// also asks for another round. After kMaxPlanRounds the Deployment is looked
// at again after kStillChangingRequeue instead of looping.
//
// The observed state comes from `observe` (Caches::Assemble in production, a
// FakeApi in tests); the PriorityClass a new Workload needs is read live
// (FillPriorityClasses).
//
// Thread-safe when `observe`, the Api and the Executor are (they are:
// workers run reconciles of different keys concurrently).
#ifndef WASD_RECONCILER_PLAN_ROUNDS_H_
#define WASD_RECONCILER_PLAN_ROUNDS_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "planner/plan.h"
#include "reconciler/api.h"
#include "reconciler/executor.h"
#include "reconciler/reconciler.h"
#include "runtime/log.h"

namespace wasd::reconciler {

// Plans per reconcile: create Workload → plan → create PodGroups, lift gates
// → (a conflict) → plan again. Four covers every chain the planner makes;
// more would hide a loop.
inline constexpr int kMaxPlanRounds = 4;
// Still changing after kMaxPlanRounds: look again this soon (the watch
// events of our own writes usually bring the key back first).
inline constexpr std::chrono::milliseconds kStillChangingRequeue{1000};

// The observed state of one Deployment (priority classes not filled); its
// `deployment` is null when the Deployment is gone.
using Observe = std::function<planner::PlanInput()>;

// M3: when the pod template names a PriorityClass and the Deployment's
// Workload does not exist yet, reads the class live into
// `in.priority_classes`. A class that does not exist is left out (the plan
// says so in an Event); any other failure is returned — the Workload's
// template is immutable, so a guess would stick for the Deployment's life.
base::Status FillPriorityClasses(Api& api, planner::PlanInput& in);

// Runs the rounds for Deployment `key` ("ns/name", for the log); `writes`
// counts what the executor wrote. `scheduling`: the scheduling.k8s.io
// version the executor writes through (the one `observe` puts in
// PlanInput::scheduling_api_version).
ReconcileResult RunPlanRounds(const std::string& key, const Observe& observe, Api& api,
                              Executor& executor, const runtime::Logger& log,
                              const SchedulingApi& scheduling = SchedulingApi{"v1beta1"});

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_PLAN_ROUNDS_H_
