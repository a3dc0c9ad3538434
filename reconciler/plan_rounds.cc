// RunPlanRounds and FillPriorityClasses (see plan_rounds.h).
#include "reconciler/plan_rounds.h"

#include "objects/json_util.h"

namespace wasd::reconciler {

using nlohmann::json;
using objects::ControllerUid;
using objects::Object;
using objects::UidOf;
using planner::Plan;
using planner::PlanInput;

base::Status FillPriorityClasses(Api& api, PlanInput& in) {
  const std::string* pcn = objects::AsString(
      objects::MemberPath(*in.deployment, {"spec", "template", "spec", "priorityClassName"}));
  if (pcn == nullptr || pcn->empty()) return base::Status::Ok();
  const std::string uid = UidOf(*in.deployment);
  for (const Object& w : in.workloads) {
    if (ControllerUid(*w) == uid) return base::Status::Ok();  // only needed to create the Workload
  }
  base::Result<json> pc = api.Get(PriorityClasses(), "", *pcn);
  if (!pc.ok()) return pc.status().not_found() ? base::Status::Ok() : pc.status();
  if (const auto value = objects::AsInt(objects::Member(pc.value(), "value"))) {
    in.priority_classes.emplace(*pcn, *value);
  }
  return base::Status::Ok();
}

ReconcileResult RunPlanRounds(const std::string& key, const Observe& observe, Api& api,
                              Executor& executor, const runtime::Logger& log,
                              const SchedulingApi& scheduling) {
  ReconcileResult result;
  for (int round = 0; round < kMaxPlanRounds; ++round) {
    ++result.rounds;
    PlanInput in = observe();
    if (in.deployment == nullptr) return result;
    if (base::Status pcs = FillPriorityClasses(api, in); !pcs.ok()) {
      result.status = pcs;
      return result;
    }
    const Plan plan = planner::PlanDeployment(in);
    if (!plan.note.empty()) log.Debug("plan", {{"deployment", key}, {"note", plan.note}});
    if (plan.empty()) return result;
    const ExecuteOutcome out = executor.Execute(*in.deployment, plan, scheduling);
    result.writes += out.writes;
    if (out.requeue_after) result.requeue_after = out.requeue_after;
    if (!out.status.ok()) {
      result.status = out.status;
      return result;
    }
    if (out.not_leader || !(out.replan || plan.needs_replan)) return result;
  }
  // Still changing after every round: look again shortly.
  result.requeue_after = kStillChangingRequeue;
  return result;
}

}  // namespace wasd::reconciler
