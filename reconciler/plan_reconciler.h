// PlanReconciler: the reconciler's main controller — for one Deployment key,
// the observed objects from the caches (Caches::Assemble) go through the pure
// planner and the executor (RunPlanRounds) until the plan is done: the
// Workload, one group object per active ReplicaSet, the gates lifted, the
// groups of retired revisions deleted. A Deployment whose backend cannot be
// used now (not allowed, its API not served) gets a Warning Event instead and
// nothing is written for it.
//
// Thread-safe across keys (the manager's loop runs keys concurrently).
#ifndef WASD_RECONCILER_PLAN_RECONCILER_H_
#define WASD_RECONCILER_PLAN_RECONCILER_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reconciler/executor.h"
#include "reconciler/manager.h"
#include "reconciler/reconciler.h"

namespace wasd::reconciler {

class PlanReconciler : public Reconciler {
 public:
  explicit PlanReconciler(Manager& manager);

  std::string_view Name() const override { return "plan"; }
  ReconcileResult Reconcile(const std::string& key) override;

 private:
  // The Warning Event for a Deployment of a backend that cannot be used now.
  void ReportUnusable(const planner::PlanInput& in, workloadbuilder::Backend backend);

  Manager& m_;
  Executor executor_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_PLAN_RECONCILER_H_
