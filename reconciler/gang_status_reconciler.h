// GangStatusReconciler: the gang doctor as its own controller. For one
// Deployment key it reads the gang from the shared caches (the same
// Caches::Assemble the plan reads), diagnoses it and publishes the
// GangScheduled condition, its Event and the wasd_gang_* metrics
// (GangStatus, gang_status.h).
//
// It has its own queue (Manager::Add), fed by the same informer events as
// the plan's. An event queues a key after kGangBatch (a key already waiting
// keeps its earlier time), so the burst of events of a gang on its way —
// created, its gates lifted, its members placed — merges into a few looks.
// Scheduled is written at once; another reason only once it has held for the
// settle time (--gang-status-delay; GangStatus asks for the look that writes
// it as the reconcile's requeue). The doctor never waits for the plan, and
// the plan never for it: what the plan wrote reaches the doctor as the watch
// events it causes.
//
// Thread-safe across keys.
#ifndef WASD_RECONCILER_GANG_STATUS_RECONCILER_H_
#define WASD_RECONCILER_GANG_STATUS_RECONCILER_H_

#include <string>
#include <string_view>

#include "reconciler/gang_status.h"
#include "reconciler/manager.h"
#include "reconciler/reconciler.h"

namespace wasd::reconciler {

// How long an event's key waits in the doctor's queue: the events of one
// gang's creation (a pod created, its gate lifted, bound: a dozen within a
// few hundred ms) merge into one look, and a placed gang's Scheduled is still
// written within a quarter of a second.
inline constexpr std::chrono::milliseconds kGangBatch{250};

class GangStatusReconciler : public Reconciler {
 public:
  // Registers the wasd_gang_* families with the manager's metrics and makes
  // the caches ready for the fit preview (Caches::EnableGangStatus): call
  // before Manager::Run.
  explicit GangStatusReconciler(Manager& manager);

  std::string_view Name() const override { return "gang-status"; }
  ReconcileResult Reconcile(const std::string& key) override;

  GangStatus& status() { return gang_; }

 private:
  Manager& m_;
  GangStatus gang_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_GANG_STATUS_RECONCILER_H_
