// `wasd reconciler`: parses the flags (cmd/flags.cc ReconcilerFlags), loads
// the API server config, and runs the companion controller until
// SIGTERM/SIGINT (then: Lease released, workers stopped, exit 0).
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stop_token>
#include <string>
#include <thread>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/metrics_serving.h"
#include "kube/backoff.h"
#include "kube/config.h"
#include "reconciler/controller.h"
#include "runtime/file_util.h"
#include "runtime/log.h"

namespace wasd::cmd {

namespace {

// In-cluster service accounts know their namespace from this file.
constexpr const char* kNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
constexpr const char* kDefaultLeaseNamespace = "wasd-system";

std::string Identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "wasd");
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%08x",
                static_cast<unsigned>(kube::Random01() * 4294967295.0));
  return std::string(host) + suffix;
}

std::string OwnNamespace() {
  base::Result<std::string> text = runtime::ReadSmallFile(kNamespaceFile, 253 + 1);
  if (!text.ok()) return kDefaultLeaseNamespace;
  std::string ns = std::move(text).value();
  while (!ns.empty() && std::isspace(static_cast<unsigned char>(ns.back())) != 0) ns.pop_back();
  return ns.empty() ? kDefaultLeaseNamespace : ns;
}

// glibc raises its mmap threshold to the size of each large block freed
// (up to 32 MiB), after which blocks that size come from a thread's arena and
// stay there when freed. The reconciler's large blocks are short-lived and
// made by threads that allocate little else: a /metrics text (~0.5 MB at
// 1,000 gangs), a LIST or a patch response. A fixed threshold keeps them
// mmap'd, so each is returned to the system when freed. Measured in
// tools/bench/RESULTS.md ("Gang doctor cost"): about 0.5 MiB less peak RSS.
constexpr int kMmapThresholdBytes = 128 * 1024;

}  // namespace

int RunReconciler(int argc, const char* const* argv) {
  ReconcilerSettings settings;
  runtime::FlagSet flags = ReconcilerFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  if (std::string e = BackendFlagsError(settings.backends); !e.empty()) return flags.UsageError(e);
  reconciler::ControllerOptions& options = settings.options;
  if (std::string e = MetricsServingError(options.probe_address, options.metrics_address,
                                          options.metrics_serving);
      !e.empty())
    return flags.UsageError(e);
  const runtime::Logger log(settings.log);
  if (mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) != 1) {
    log.Warn("cannot fix the allocator's mmap threshold; large freed blocks may stay resident");
  }
  base::Result<kube::Config> config = LoadKubeconfig(settings.kubeconfig, settings.selection);
  if (!config.ok()) {
    log.Error("cannot load the API server configuration", {{"error", config.status().message()}});
    return runtime::kExitUsage;
  }
  options.kube = config.value();
  base::Result<std::unique_ptr<metricsauth::SecureMetrics>> secure_metrics =
      MakeSecureMetrics(options.metrics_address, options.metrics_serving, "", "", config, log);
  if (!secure_metrics.ok()) {
    log.Error("cannot serve /metrics", {{"error", secure_metrics.status().message()}});
    return 1;
  }
  if (secure_metrics.value()) options.metrics_security = secure_metrics.value()->Security();
  options.kube.rate_limit = {settings.kube_api_qps, settings.kube_api_burst};
  options.election.lease_namespace =
      settings.lease_namespace.empty() ? OwnNamespace() : settings.lease_namespace;
  options.election.identity = Identity();
  options.backends = settings.backends;
  log.Info("configuration",
           {{"source", options.kube.source},
            {"server", options.kube.server},
            {"kubeApiQps", settings.kube_api_qps},
            {"kubeApiBurst", settings.kube_api_burst},
            {"lease", options.election.lease_namespace + "/" + options.election.lease_name}});

  // Signals are taken by one thread with sigtimedwait: block them everywhere
  // before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::stop_source stop;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    const timespec tick{0, 200'000'000};  // re-check `done` 5 times a second
    while (!done) {
      const int sig = sigtimedwait(&signals, nullptr, &tick);
      if (sig == SIGTERM || sig == SIGINT) {
        log.Info("signal received; shutting down",
                 {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
        stop.request_stop();
        return;
      }
    }
  });
  const int rc = reconciler::RunController(options, stop.get_token(), log);
  done = true;
  stop.request_stop();
  waiter.join();
  return rc;
}

}  // namespace wasd::cmd
