// PlanReconciler (see plan_reconciler.h).
#include "reconciler/plan_reconciler.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "objects/object_util.h"
#include "reconciler/plan_rounds.h"
#include "workloadbuilder/pod_holds.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::reconciler {

using planner::PlanInput;
using workloadbuilder::Backend;

namespace {

// A Deployment whose pod template names a backend this reconciler does not
// serve (--allowed-backends changed after it was admitted).
constexpr std::string_view kReasonBackendNotAllowed = "BackendNotAllowed";

// How the pods of the Deployment's ReplicaSets wait, worded from each pod's
// own state (a gate, its scheduler, or nothing), never from a flag.
std::string Waiting(const PlanInput& in, Backend backend) {
  std::vector<const nlohmann::json*> pods;
  const std::string uid = objects::UidOf(*in.deployment);
  std::set<std::string> ours;
  for (const objects::Object& rs : in.replicasets) {
    if (rs != nullptr && objects::ControllerUid(*rs) == uid) ours.insert(objects::UidOf(*rs));
  }
  for (const objects::Object& pod : in.pods) {
    if (pod != nullptr && ours.count(objects::ControllerUid(*pod)) > 0) pods.push_back(pod.get());
  }
  return workloadbuilder::HoldWords(workloadbuilder::CountHolds(pods, backend), "their group");
}

// The Warning Event of a Deployment whose backend is not allowed here or whose
// API is not served.
planner::Action UnusableBackendEvent(const PlanInput& in, Backend backend,
                                     const std::vector<Backend>& allowed_backends, bool allowed) {
  const std::string name(workloadbuilder::BackendName(backend));
  const std::string waiting = Waiting(in, backend);
  if (!allowed) {
    std::string allowed_text;
    for (const Backend b : allowed_backends) {
      allowed_text +=
          (allowed_text.empty() ? "" : ", ") + std::string(workloadbuilder::BackendName(b));
    }
    return planner::Action::Event(
        "Warning", kReasonBackendNotAllowed,
        "The pod template names backend " + name +
            ", which this reconciler does not serve (--allowed-backends: " + allowed_text +
            "); wasd creates no group objects for this Deployment (" + waiting +
            "): allow the backend, or choose another with the annotation " +
            std::string(workloadbuilder::kBackendAnnotation));
  }
  if (backend == Backend::kNative) {
    return planner::Action::Event(
        "Warning", planner::kReasonApiNotServed,
        "scheduling.k8s.io Workloads and PodGroups are not served by this cluster (neither v1 nor "
        "v1beta1); wasd creates no Workload or PodGroups for this Deployment (" +
            waiting + ") until the API is served: " + WhatToInstall(backend));
  }
  return planner::Action::Event("Warning", planner::kReasonApiNotServed,
                                ApiWords(backend) + " (backend " + name +
                                    ") is not served by this cluster; wasd creates no PodGroup "
                                    "for this Deployment (" +
                                    waiting + ") until it is: " + WhatToInstall(backend));
}

}  // namespace

PlanReconciler::PlanReconciler(Manager& manager)
    : m_(manager),
      executor_(manager.api(), manager.recent(), manager.events(), manager.metrics(), manager.log(),
                [this] { return m_.MayWrite(); }) {
  executor_.TrustCachedOwners([this](const std::string& ns, const std::string& name) {
    return m_.caches().deleted().Seen(ns, name);
  });
}

ReconcileResult PlanReconciler::Reconcile(const std::string& key) {
  ReconcileResult result;
  std::string ns;
  std::string name;
  if (!objects::SplitKey(key, &ns, &name) || !m_.MayWrite()) return result;
  if (!m_.Synced()) {  // a key queued before sync (loops start after it; belt and braces)
    result.requeue_after = std::chrono::milliseconds(1000);
    return result;
  }
  // Q22: the in-tree controller's Deployment; wasd writes nothing for it.
  if (const objects::Object d = m_.caches().Deployment(ns, name);
      d != nullptr && InTreeManaged(*d)) {
    m_.StandDown(key);
    return result;
  }
  std::optional<PlanInput> first = m_.caches().Assemble(ns, name);
  if (first->deployment == nullptr) return result;
  // A label that names no backend is the planner's to report.
  const std::optional<Backend> backend = planner::BackendOf(*first->deployment);
  if (backend && m_.Allowed(*backend) && !m_.Served(*backend) && m_.Syncing(*backend)) {
    // Served, its group caches not filled yet: no plan and no Event.
    result.requeue_after = std::chrono::milliseconds(1000);
    return result;
  }
  if (backend && !(m_.Allowed(*backend) && m_.Served(*backend))) {
    if (!objects::IsTerminating(*first->deployment)) ReportUnusable(*first, *backend);
    return result;
  }
  // One version for the whole reconcile: what the plan builds and where the
  // executor writes agree even if discovery switches meanwhile.
  const SchedulingApi scheduling = m_.Scheduling();
  const auto observe = [&] {
    PlanInput in = first ? std::move(*first) : m_.caches().Assemble(ns, name);
    first.reset();
    in.facts = m_.options().backends.facts;
    in.scheduling_api_version = scheduling.GroupVersion();
    return in;
  };
  result = RunPlanRounds(key, observe, m_.api(), executor_, m_.log(), scheduling);
  // A create answered 404: the group API may be gone or served under another
  // version; the API check looks now rather than at its next interval.
  if (result.status.not_found()) m_.RecheckApiSoon();
  return result;
}

void PlanReconciler::ReportUnusable(const PlanInput& in, Backend backend) {
  // Through the executor, like every Event of the plan.
  planner::Plan plan;
  plan.backend = backend;
  plan.actions.push_back(UnusableBackendEvent(in, backend, m_.allowed(), m_.Allowed(backend)));
  executor_.Execute(*in.deployment, plan, m_.Scheduling());
}

}  // namespace wasd::reconciler
