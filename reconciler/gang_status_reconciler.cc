// GangStatusReconciler (see gang_status_reconciler.h).
#include "reconciler/gang_status_reconciler.h"

#include <optional>

#include "objects/object_util.h"
#include "planner/plan.h"

namespace wasd::reconciler {

using workloadbuilder::Backend;

GangStatusReconciler::GangStatusReconciler(Manager& manager)
    : m_(manager),
      gang_(manager.api(), manager.events(), manager.log(), manager.options().backends.facts,
            manager.options().gang_status_delay) {
  m_.caches().EnableGangStatus();
  gang_.SetMemberSeries(manager.options().gang_member_series,
                        manager.options().gang_member_max_gangs);
  m_.metrics().SetExtraSource(
      [this](std::string* out) { gang_.Render(out, m_.caches().CountNotAdmitted()); });
}

ReconcileResult GangStatusReconciler::Reconcile(const std::string& key) {
  ReconcileResult result;
  std::string ns;
  std::string name;
  if (!objects::SplitKey(key, &ns, &name) || !m_.MayWrite()) return result;
  if (!m_.Synced()) {
    result.requeue_after = std::chrono::milliseconds(1000);
    return result;
  }
  // Q22: the in-tree controller's Deployment; nothing of wasd's to publish.
  if (const objects::Object d = m_.caches().Deployment(ns, name);
      d != nullptr && InTreeManaged(*d)) {
    gang_.Forget(ns, name);
    return result;
  }
  planner::PlanInput in = m_.caches().Assemble(ns, name);
  if (in.deployment == nullptr) {
    gang_.Forget(ns, name);
    return result;
  }
  // A backend this reconciler does not serve is not its gang to explain (the
  // plan's BackendNotAllowed Event says so); one whose API is not served is
  // (APINotAvailable).
  const std::optional<Backend> backend = planner::BackendOf(*in.deployment);
  if (backend && !m_.Allowed(*backend)) return result;
  // Served, its group caches not filled yet: the gang is not judged yet.
  if (backend && !m_.Served(*backend) && m_.Syncing(*backend)) {
    result.requeue_after = std::chrono::milliseconds(1000);
    return result;
  }
  in.facts = m_.options().backends.facts;
  const bool served = !backend || m_.Served(*backend);
  // None in use when not served: the doctor names the backend table's.
  if (served) in.scheduling_api_version = m_.Scheduling().GroupVersion();
  const GangUpdate u = gang_.Update(
      in, ns, name, served,
      [this](std::vector<objects::Object>* nodes, std::vector<objects::Object>* bound_pods) {
        return m_.caches().FitInputs(nodes, bound_pods);
      });
  result.status = u.status;
  result.requeue_after = u.recheck;
  result.writes = u.wrote ? 1 : 0;
  return result;
}

}  // namespace wasd::reconciler
