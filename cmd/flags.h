// The command line of every wasd subcommand, as one table per command over
// runtime::FlagSet: which flags it takes, into which settings, with which help.
// Each builder registers its flags against the settings it is given (their
// current values are the defaults shown by --help) and returns the FlagSet
// to Parse. Keeping every table here lets one test check that all commands
// read flags, durations, booleans and log options alike
// (tests/cmd/flags_test.cc).
//
// Not thread-safe; used at start-up.
#ifndef WASD_CMD_FLAGS_H_
#define WASD_CMD_FLAGS_H_

#include <chrono>
#include <string>
#include <vector>

#include "certs/generate.h"
#include "certs/rotation.h"
#include "kube/config.h"
#include "reconciler/controller.h"
#include "runtime/flags.h"
#include "runtime/log.h"
#include "server/webhook_config.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::cmd {

// The gang-scheduling backend flags (docs/design.md Q19), one table shared by
// `wasd webhook`, `wasd reconciler` and `wasd check`:
//   --backend NAME                       a Deployment without wasd.io/backend
//   --allowed-backends NAME,...          what wasd.io/backend may name
//                                        (default: just --backend)
//   --volcano-topology-tiers KEY=TIER,.. node-label key -> HyperNode tier
//                                        (a number: highestTierAllowed; a
//                                        name: highestTierName)
//   --volcano-queue, --kai-queue         the queue when a Deployment names none
//   --kai-topology NAME, --kai-topology-levels KEY,...
//   --coscheduling-scheduler-name NAME
void AddBackendFlags(runtime::FlagSet& flags, workloadbuilder::BackendSettings* settings);
// After Parse: "" or why the backend flags do not fit together (--backend
// not among --allowed-backends; --kai-topology-levels without
// --kai-topology). Report it with FlagSet::UsageError.
std::string BackendFlagsError(const workloadbuilder::BackendSettings& settings);

// How a command that talks to a cluster reaches it, with kubectl's flags
// (AddConnectionFlags), shared by explain, selftest, migrate and certs
// inject-ca/rotate/uninstall:
//   --kubeconfig FILE            the kubeconfig (else $KUBECONFIG, in-cluster,
//                                ~/.kube/config: kube/config.h)
//   --context NAME               that context instead of current-context
//   --cluster NAME, --user NAME  instead of the context's cluster / user
//   --request-timeout DURATION   the deadline of each request
// -n/--namespace is each command's own (not every command has one).
struct ConnectionSettings {
  std::string kubeconfig;
  std::string context;
  std::string cluster;
  std::string user;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  // --timeout where it was the per-request deadline (explain, selftest):
  // deprecated, applied by DeprecatedTimeoutWarning.
  std::chrono::milliseconds deprecated_timeout{0};
};
void AddConnectionFlags(runtime::FlagSet& flags, ConnectionSettings* settings);
// Where --kubeconfig, --context, --cluster and --user are stored: the part of
// AddConnectionFlags the daemons (webhook, reconciler) share. They have no
// --request-timeout: each of their API calls has its own deadline.
struct KubeconfigFlagTargets {
  std::string* kubeconfig;
  std::string* context;
  std::string* cluster;
  std::string* user;
};
void AddKubeconfigFlags(runtime::FlagSet& flags, const KubeconfigFlagTargets& targets);
// Reads the environment and loads the configuration --kubeconfig, --context,
// --cluster and --user select (kube::LoadConfig), request deadline default.
base::Result<kube::Config> LoadKubeconfig(const std::string& kubeconfig,
                                          const kube::KubeconfigSelection& selection);
// Registers --timeout as the deprecated spelling of --request-timeout.
void AddDeprecatedTimeoutFlag(runtime::FlagSet& flags, ConnectionSettings* settings);
// After Parse: "" when --timeout was not given; else copies it into
// request_timeout (unless --request-timeout was given too, which wins) and
// returns the warning to print, naming the replacement (docs/support.md).
std::string DeprecatedTimeoutWarning(const runtime::FlagSet& flags, ConnectionSettings* settings);
// Reads the environment (kube::SourcesFromEnvironment) and loads the client
// configuration the flags select; its request deadline is --request-timeout.
// The caller reports a failure with kExitUsage (no client configuration is
// exit 2 on every command: docs/reference/cli.md).
base::Result<kube::Config> LoadConnection(const ConnectionSettings& settings);

// `wasd webhook`.
runtime::FlagSet WebhookFlags(server::WebhookConfig* config);

// `wasd reconciler`.
struct ReconcilerSettings {
  reconciler::ControllerOptions options;
  // --kubeconfig, --context, --cluster, --user (AddKubeconfigFlags).
  std::string kubeconfig;
  kube::KubeconfigSelection selection;
  std::string lease_namespace;  // "" = own namespace in-cluster, else wasd-system
  // Client-side request rate limit: --kube-api-qps (0 = none) and --kube-api-burst.
  double kube_api_qps = 20;
  int kube_api_burst = 30;
  runtime::LogOptions log;
  workloadbuilder::BackendSettings backends;  // AddBackendFlags
};
runtime::FlagSet ReconcilerFlags(ReconcilerSettings* settings);

// `wasd check`.
struct CheckSettings {
  std::vector<std::string> files;
  bool recursive = false;
  std::string output = "text";
  bool capabilities = false;                  // --capabilities: print the table
  workloadbuilder::BackendSettings backends;  // AddBackendFlags
  std::string scheduling_api_version = "v1";  // --scheduling-api-version
};
runtime::FlagSet CheckFlags(CheckSettings* settings);

// `wasd certs generate`.
struct GenerateSettings {
  certs::GenerateOptions options;
  runtime::LogOptions log;
};
runtime::FlagSet GenerateFlags(GenerateSettings* settings);

// `wasd certs inject-ca`.
struct InjectCaSettings {
  std::string ca_file;
  std::vector<std::string> webhook_configs;
  ConnectionSettings connection;
  runtime::LogOptions log;
};
runtime::FlagSet InjectCaFlags(InjectCaSettings* settings);

// `wasd certs rotate`.
struct RotateSettings {
  certs::RotationOptions options;
  // Time between checks: hourly catches a renewal window of days with
  // hours to spare and costs one GET an hour.
  std::chrono::seconds interval{std::chrono::hours(1)};
  bool once = false;
  ConnectionSettings connection;
  runtime::LogOptions log;
};
runtime::FlagSet RotateFlags(RotateSettings* settings);

// `wasd certs uninstall`.
struct UninstallSettings {
  std::vector<std::string> webhook_configs;
  std::vector<std::string> secrets;  // NAMESPACE/NAME
  ConnectionSettings connection;
  runtime::LogOptions log;
};
runtime::FlagSet UninstallFlags(UninstallSettings* settings);

// `wasd selftest`.
struct SelftestSettings {
  std::string ns = "default";
  // request_timeout: a dry-run create passes through two webhooks.
  ConnectionSettings connection;
  runtime::LogOptions log;
};
runtime::FlagSet SelftestFlags(SelftestSettings* settings);

// `wasd explain`.
struct ExplainSettings {
  std::string ns;  // "" = the kubeconfig context's namespace
  std::string output = "text";
  ConnectionSettings connection;
  // AddBackendFlags: the reconciler's cluster facts (--volcano-topology-tiers,
  // --kai-topology, ...), so that the diagnosis judges a topology key on
  // Volcano or KAI as the reconciler does.
  workloadbuilder::BackendSettings backends;
};
runtime::FlagSet ExplainFlags(ExplainSettings* settings);

// `wasd version`.
struct VersionSettings {
  std::string output = "text";  // -o text|json|yaml
  bool short_form = false;      // --short: the version alone
};
runtime::FlagSet VersionFlags(VersionSettings* settings);

}  // namespace wasd::cmd

#endif  // WASD_CMD_FLAGS_H_
