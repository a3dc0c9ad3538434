// Exec credential plugins (kubeconfig `users[].user.exec`): the way EKS
// (`aws eks get-token`), GKE (`gke-gcloud-auth-plugin`) and AKS (`kubelogin`)
// hand out tokens. wasd runs the plugin with the ExecCredential protocol of
// client.authentication.k8s.io/v1 or v1beta1, reads the bearer token from its
// answer, and keeps it until `status.expirationTimestamp` (or for the
// process's life when the plugin gives none, until the server answers 401).
//
// Supported: command, args, env, apiVersion, interactiveMode (Never and
// IfAvailable; wasd never has a terminal to give a plugin, so Always is
// refused at load time), installHint (shown when the command is missing),
// provideClusterInfo (the cluster's server and CA are passed in
// KUBERNETES_EXEC_INFO). Not supported: client certificates returned by a
// plugin (refused with a clear error; every managed cluster's plugin returns
// a token).
//
// ParseExecCredential is pure. ExecTokenSource runs the plugin (fork/exec,
// stdin from /dev/null, stdout captured up to 1 MiB, a 60 s deadline, stderr
// passed through) and is thread-safe.
#ifndef WASD_KUBE_EXEC_CREDENTIAL_H_
#define WASD_KUBE_EXEC_CREDENTIAL_H_

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace wasd::kube {

using base::Result;
using base::Status;

struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      // a path, or a name looked up in $PATH
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to wasd's own
  std::string interactive_mode;                          // Never or IfAvailable
  std::string install_hint;
  bool provide_cluster_info = false;
};

struct ExecCredential {
  std::string token;
  // When the token stops being valid; nullopt: no expiry given.
  std::optional<std::chrono::system_clock::time_point> expiration;
};

// The plugin's standard output, checked like client-go does: an
// ExecCredential of `api_version` with status.token. Errors name what is
// wrong ("missing status.token", "apiVersion ... does not match").
Result<ExecCredential> ParseExecCredential(std::string_view output, std::string_view api_version);

// Longest a plugin may run: cloud CLIs can be slow on a cold start.
inline constexpr std::chrono::seconds kExecTimeout{60};
// Largest plugin answer read: a token is a few KiB.
inline constexpr std::size_t kMaxExecOutputBytes = std::size_t{1} << 20;
// A token that expires sooner than this is fetched anew before a request.
inline constexpr std::chrono::seconds kExpiryMargin{10};

class ExecTokenSource {
 public:
  // `server` and `ca_pem` go to the plugin when provide_cluster_info.
  ExecTokenSource(ExecConfig config, std::string server, std::string ca_pem);

  // The cached token, or a fresh one from the plugin when there is none, it
  // expires within kExpiryMargin, or Invalidate() was called.
  Result<std::string> Token();
  // The server refused the token (401): the next Token() runs the plugin.
  void Invalidate();
  // How often the plugin ran (for tests and logs).
  int runs() const;

 private:
  Result<ExecCredential> Run() const;

  const ExecConfig config_;
  const std::string server_;
  const std::string ca_pem_;
  mutable std::mutex mu_;  // guards everything below; held while the plugin runs
  std::optional<ExecCredential> cached_;
  int runs_ = 0;
};

}  // namespace wasd::kube

#endif  // WASD_KUBE_EXEC_CREDENTIAL_H_
