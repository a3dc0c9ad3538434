// `wasd reconciler`: parses the flags (DESIGN.md "Command line"), loads the
// API server config, and runs the companion controller until SIGTERM/SIGINT
// (then: Lease released, workers stopped, exit 0).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "kube/backoff.h"
#include "kube/config.h"
#include "reconciler/controller.h"
#include "reconciler/log.h"
#include "server/commands.h"

namespace wasd::server {

namespace {

constexpr const char* kUsage =
    "Usage: wasd reconciler [flags]\n"
    "\n"
    "The companion controller: one Workload per opted-in Deployment, one PodGroup per\n"
    "ReplicaSet revision, and it lifts the pods' wasd.io/pod-group scheduling gate once\n"
    "their PodGroup exists. Several replicas may run: a Lease elects the one that writes.\n"
    "\n"
    "Flags:\n"
    "  --kubeconfig FILE                   API server config (else $KUBECONFIG, in-cluster,\n"
    "                                      ~/.kube/config)\n"
    "  --leader-elect=true|false           hold the Lease before writing (default true;\n"
    "                                      false for a single replica)\n"
    "  --lease-namespace NS                namespace of the Lease wasd-reconciler (default:\n"
    "                                      own namespace in-cluster, else wasd-system)\n"
    "  --health-probe-bind-address ADDR    /healthz and /readyz (default :8081; 0 = off)\n"
    "  --metrics-bind-address ADDR         /metrics (default :8080; 0 = off)\n"
    "  --workers N                         concurrent reconciles (default 2)\n"
    "  --resync-period DURATION            re-check every Deployment this often (default 10m;\n"
    "                                      e.g. 30s, 5m, 1h)\n"
    "  --log-level debug|info|warn|error   (default info)\n"
    "  --help                              this text\n";

// In-cluster service accounts know their namespace from this file.
constexpr const char* kNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
constexpr const char* kDefaultLeaseNamespace = "wasd-system";
// Largest --workers: more threads than this only queue on the API server's
// priority-and-fairness limits and the 2-core controllers they run on.
constexpr int kMaxWorkers = 64;

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) ++i;
  if (i == 0 || i > 9) return std::nullopt;
  const long long n = std::stoll(std::string(text.substr(0, i)));
  const std::string_view unit = text.substr(i);
  if (unit == "ms") return std::chrono::milliseconds(n);
  if (unit == "s" || unit.empty()) return std::chrono::seconds(n);
  if (unit == "m") return std::chrono::minutes(n);
  if (unit == "h") return std::chrono::hours(n);
  return std::nullopt;
}

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return std::nullopt;
}

std::string Identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "wasd");
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%08x",
                static_cast<unsigned>(kube::Random01() * 4294967295.0));
  return std::string(host) + suffix;
}

std::string OwnNamespace() {
  std::ifstream in(kNamespaceFile);
  std::string ns;
  if (in && std::getline(in, ns)) {
    while (!ns.empty() && std::isspace(static_cast<unsigned char>(ns.back())) != 0) ns.pop_back();
    if (!ns.empty()) return ns;
  }
  return kDefaultLeaseNamespace;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "wasd reconciler: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int RunReconciler(int argc, char** argv) {
  reconciler::ControllerOptions options;
  std::string kubeconfig;
  std::string lease_namespace;
  reconciler::Level level = reconciler::Level::kInfo;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string name(arg);
    std::optional<std::string> value;
    if (const auto eq = arg.find('='); eq != std::string_view::npos) {
      name = std::string(arg.substr(0, eq));
      value = std::string(arg.substr(eq + 1));
    }
    auto take = [&]() -> std::optional<std::string> {
      if (value) return value;
      if (i + 1 < argc) return std::string(argv[++i]);
      return std::nullopt;
    };
    if (name == "--leader-elect") {
      const auto b = value ? ParseBool(*value) : std::optional<bool>(true);
      if (!b) return Fail("--leader-elect takes true or false");
      options.leader_elect = *b;
      continue;
    }
    const std::optional<std::string> v = take();
    if (!v) return Fail("flag " + name + " needs a value");
    if (name == "--kubeconfig") {
      kubeconfig = *v;
    } else if (name == "--lease-namespace") {
      lease_namespace = *v;
    } else if (name == "--health-probe-bind-address") {
      options.probe_address = *v;
    } else if (name == "--metrics-bind-address") {
      options.metrics_address = *v;
    } else if (name == "--workers") {
      char* end = nullptr;
      const long n = std::strtol(v->c_str(), &end, 10);
      if (end == v->c_str() || *end != '\0' || n < 1 || n > kMaxWorkers) {
        return Fail("--workers must be 1.." + std::to_string(kMaxWorkers));
      }
      options.workers = static_cast<int>(n);
    } else if (name == "--resync-period") {
      const auto d = ParseDuration(*v);
      if (!d || d->count() <= 0) return Fail("--resync-period: not a duration: " + *v);
      options.resync = *d;
    } else if (name == "--log-level") {
      if (*v == "debug") level = reconciler::Level::kDebug;
      else if (*v == "info") level = reconciler::Level::kInfo;
      else if (*v == "warn") level = reconciler::Level::kWarn;
      else if (*v == "error") level = reconciler::Level::kError;
      else return Fail("--log-level must be debug, info, warn or error");
    } else {
      return Fail("unknown flag " + name);
    }
  }

  const reconciler::Log log(level);
  base::Result<kube::Config> config = kube::LoadConfig(kube::SourcesFromEnvironment(kubeconfig));
  if (!config.ok()) {
    log.Error("cannot load the API server configuration", {{"error", config.status().message()}});
    return 2;
  }
  options.kube = config.value();
  options.election.lease_namespace = lease_namespace.empty() ? OwnNamespace() : lease_namespace;
  options.election.identity = Identity();
  log.Info("configuration", {{"source", options.kube.source},
                             {"server", options.kube.server},
                             {"lease", options.election.lease_namespace + "/" +
                                           options.election.lease_name}});

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
        log.Info("signal received; shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
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

}  // namespace wasd::server
