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

  // Runs the plan. Returns true when every step succeeded; false after the
  // first failure, which has been reported on stderr with the state left.
  bool Apply(const migrate::Plan& plan);

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

  bool InPlace(const migrate::Plan& plan);
  bool SideBySide(const migrate::Plan& plan);
  // The steps shared by both plans.
  bool Delete(const migrate::Plan& plan, int step);
  bool WaitOldGone(const migrate::Plan& plan, int step, const nlohmann::json& old_deployment,
                   const std::vector<std::string>& old_rs);
  // Creates the manifest; sets *uid.
  bool Create(const migrate::Plan& plan, int step, std::string* uid);
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
