// `wasd migrate` against a cluster: the checks that need the API server (the
// Workload API version served, a free name, the server-side dry run that
// shows whether spec.scheduling is kept) and `--apply`, which carries a
// migrate::Plan out step by step, waiting between steps with a bound, and on
// the first failure says what exists now and what to do next.
//
// Progress goes to stderr, one line per step. Blocking; one thread.
#ifndef WASD_CMD_MIGRATE_APPLY_H_
#define WASD_CMD_MIGRATE_APPLY_H_

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cmd/api_error.h"
#include "kube/client.h"
#include "migrate/objects.h"
#include "migrate/plan.h"

namespace wasd::cmd {

// "deployment NS/NAME" for a Deployment of plan `p`.
std::string Ref(const migrate::Plan& p, const std::string& name);

class Migrator {
 public:
  // `timeout` bounds each wait; `request_timeout` each request.
  Migrator(kube::Client& client, std::chrono::milliseconds timeout,
           std::chrono::milliseconds request_timeout)
      : client_(client), timeout_(timeout), request_timeout_(request_timeout) {}

  // Finds the scheduling.k8s.io version that serves Workloads: v1
  // preferred, else v1beta1. Fails when neither does (the in-tree controller
  // needs the Workload API) or the API server cannot be asked.
  // Asked in `ns` ("" = all namespaces), so that a user allowed one
  // namespace only can run it.
  base::Status DiscoverSchedulingVersion(const std::string& ns);
  const std::string& scheduling_version() const { return version_; }

  // The cluster-side checks of a plan, writing nothing: side by side, the
  // new name must be free; a server-side dry-run create of the manifest must
  // come back with spec.scheduling. Returns "" or the refusal.
  std::string Check(const migrate::Plan& plan);

  // Runs the plan. First saves the new manifest to `save_path` (atomically;
  // nothing is written to the cluster when that fails) and prints the path.
  // Returns true when every step succeeded; false after the first failure,
  // which has been reported on stderr with the state left.
  bool Apply(const migrate::Plan& plan, const std::string& save_path);

  // Finishes an in-place hand-over from the file Apply saved, wherever the
  // cluster stands: the old Deployment still there (the whole plan), being
  // deleted (wait, then create), gone (create), or already re-created with
  // spec.scheduling (wait for the in-tree controller). Reported like Apply.
  bool Resume(const std::string& path);

 private:
  struct Snapshot {
    std::vector<nlohmann::json> replicasets, workloads, podgroups;
  };
  enum class Poll { kDone, kWait, kFail };

  kube::RequestOptions Options() const;
  base::Result<Snapshot> Read(const std::string& ns, const nlohmann::json& deployment);
  base::Result<migrate::Owned> OwnedBy(const std::string& ns, const nlohmann::json& deployment,
                                       const std::string& uid,
                                       const std::vector<std::string>& known_rs);

  bool InPlace(const migrate::Plan& plan, const std::string& save_path);
  // In place, from the create on (the old Deployment gone).
  bool CreateAndWait(const migrate::Plan& plan, const std::string& save_path);
  // Waits for the Deployment of plan.name with plan.uid to be gone (the
  // name free for the create); not for wasd's objects of it.
  bool WaitDeploymentGone(const migrate::Plan& plan, int step, const std::string& save_path);
  // Deletes what wasd made for the old Deployment (uid plan.uid) that is still
  // there, after the create; reports what it could not. Never fails the run.
  void CleanLeftovers(const migrate::Plan& plan, int step);
  bool SideBySide(const migrate::Plan& plan);
  // The steps shared by both plans.
  bool Delete(const migrate::Plan& plan, int step);
  bool WaitOldGone(const migrate::Plan& plan, int step, const nlohmann::json& old_deployment,
                   const std::vector<std::string>& old_rs);
  // Creates the manifest; sets *uid. `save_path`: the saved manifest the
  // failure advice names ("" side by side).
  bool Create(const migrate::Plan& plan, int step, std::string* uid,
              const std::string& save_path = {});
  bool WaitInTree(const migrate::Plan& plan, int step, const std::string& uid);

  void Step(const migrate::Plan& plan, int step, const std::string& what) const;
  // The failure report: what failed, the state left, the next step. Returns false.
  bool Failed(const migrate::Plan& plan, int step, const std::string& what,
              const std::string& state, const std::string& next) const;

  kube::Client& client_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds request_timeout_;
  std::string version_;  // "scheduling.k8s.io/v1" or "/v1beta1"
};

}  // namespace wasd::cmd

#endif  // WASD_CMD_MIGRATE_APPLY_H_
