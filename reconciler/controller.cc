#include "reconciler/controller.h"

#include <optional>

#include "objects/json_util.h"

#include "reconciler/gang_status_reconciler.h"
#include "reconciler/manager.h"
#include "reconciler/plan_reconciler.h"

namespace wasd::reconciler {

using workloadbuilder::Backend;

std::vector<Backend> AllowedBackends(const workloadbuilder::BackendSettings& settings) {
  std::vector<Backend> out;
  for (const Backend b : workloadbuilder::kAllBackends) {
    if (settings.allowed.empty() ? b == settings.backend : settings.Allows(b)) out.push_back(b);
  }
  return out;
}

std::string WhatToInstall(Backend backend) {
  switch (backend) {
    case Backend::kNative:
      return "turn on the GenericWorkload feature gate and the scheduling.k8s.io API on "
             "kube-apiserver (v1 where it is GA, Kubernetes 1.38 and later; on 1.37 "
             "--runtime-config=scheduling.k8s.io/v1beta1=true)";
    case Backend::kVolcano: return "install Volcano (CRD podgroups.scheduling.volcano.sh, v1beta1)";
    case Backend::kKai:
      return "install NVIDIA KAI-Scheduler (CRD podgroups.scheduling.run.ai, v2alpha2)";
    case Backend::kCoscheduling:
      return "install scheduler-plugins with the coscheduling plugin (CRD "
             "podgroups.scheduling.x-k8s.io, v1alpha1)";
  }
  return "";
}

std::string ApiWords(Backend backend) {
  if (backend == Backend::kNative) return "scheduling.k8s.io workloads and podgroups";
  return workloadbuilder::GroupVersion(backend) + " " +
         std::string(workloadbuilder::Info(backend).resource);
}

bool InTreeManaged(const nlohmann::json& deployment) {
  return objects::MemberPath(deployment, {"spec", "scheduling"}) != nullptr;
}

int RunController(const ControllerOptions& options, const std::stop_token& stop,
                  const runtime::Logger& log) {
  Manager manager(options, log);
  PlanReconciler plan(manager);
  manager.Add(plan, options.workers, {}, true);
  std::optional<GangStatusReconciler> doctor;
  if (options.gang_status) {
    doctor.emplace(manager);
    // One worker: a diagnosis is CPU over cached objects plus at most two
    // writes, and kGangBatch merges each gang's burst of events.
    manager.Add(*doctor, 1, kGangBatch, false);
  }
  return manager.Run(stop);
}

}  // namespace wasd::reconciler
