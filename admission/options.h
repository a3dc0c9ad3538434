// admission::Options: how the webhook answers, set from `wasd webhook` flags
// by the server and read by Review() and the handlers. A plain value;
// thread-safe as any const value.
#ifndef WASD_ADMISSION_OPTIONS_H_
#define WASD_ADMISSION_OPTIONS_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::admission {

// Who keeps a new pod out of scheduling until its group exists
// (docs/design.md Q23): the backend's scheduler itself, or wasd's gate
// wasd.io/pod-group, which the reconciler lifts.
enum class PodHold { kScheduler, kGate };

std::string_view PodHoldName(PodHold hold);

// --pod-hold: the hold of each backend, indexed in kAllBackends order.
// The defaults are the ones the schedulers' own code supports (Q23).
struct PodHolds {
  std::array<PodHold, workloadbuilder::kAllBackends.size()> by_backend = {
      PodHold::kScheduler, PodHold::kScheduler, PodHold::kScheduler, PodHold::kGate};
  PodHold For(workloadbuilder::Backend backend) const;
  void Set(workloadbuilder::Backend backend, PodHold hold);
  // "native=scheduler,volcano=scheduler,kai=scheduler,coscheduling=gate".
  std::string Text() const;
};

// Applies `text` ("volcano=gate,native=scheduler"; pairs separated by
// commas, each backend at most once) to `holds`. Returns "" or why `text`
// is not such a list (naming the allowed backends and modes); `holds` is
// changed only when it is. Pure.
std::string ParsePodHolds(std::string_view text, PodHolds* holds);

struct Options {
  bool pod_scheduling_gate = true;  // --pod-scheduling-gate (false: no gate on any backend)
  PodHolds pod_hold;                // --pod-hold
  // The cluster serves scheduling.k8s.io Workloads and PodGroups (the
  // webhook's last discovery). Only then does a native pod get the
  // scheduler hold: with kube-apiserver's GenericWorkload off the API server
  // drops spec.schedulingGroup after admission, and nothing would hold the
  // pod. False (not served, or not known): the gate (docs/design.md Q23).
  bool native_api_served = false;
  // --in-tree-deployment-integration: the cluster runs kube-controller-manager's
  // Workload integration for Deployments (gate WorkloadWithDeployment), so a
  // new Deployment managed by wasd's annotation is told about spec.scheduling
  // and `wasd migrate` (an admission warning).
  bool in_tree_deployment_integration = false;
  // --backend, --allowed-backends and the cluster facts: which backends a
  // Deployment may choose, what each can express, and the scheduler name a
  // pod of each gets.
  workloadbuilder::BackendSettings backends;
  // Nesting limit for untrusted JSON: Kubernetes objects nest ~20 deep; 200
  // leaves room for any real object and stops stack/time abuse long before.
  std::size_t max_json_depth = 200;
  // Denials carry status.details (kind, name, one cause per field error), as
  // the API server's own validation errors do. kubectl then prints
  // `The Deployment "x" is invalid: * <field errors>` and leaves out the
  // message, and with it the name of the webhook. false: message only, and
  // kubectl prints `... admission webhook "<name>" denied the request: <errors>`.
  bool denial_causes = true;
  // Decode only the members the handlers read (review.cc lists them) and
  // validate the rest without building it. false: decode the whole body
  // into a document first, as a reference for tests.
  bool prune_unread_fields = true;
  // Write the answer's JSON text directly (review.cc AnswerText). false:
  // build a json document and dump() it, the reference the tests compare
  // the direct text with, byte for byte.
  bool write_answer_directly = true;
};

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_OPTIONS_H_
