// `wasd certs`: generate (CA + serving certificate into a directory),
// inject-ca (caBundle into webhook configurations) and rotate (keep a TLS
// Secret renewed and its CA injected, once or in a loop until SIGTERM).
// Wiring only: the flags are cmd/flags.cc tables, the work is in certs/.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/time.h"
#include "certs/cert_api.h"
#include "certs/cert_info.h"
#include "certs/generate.h"
#include "certs/injector.h"
#include "certs/rotation.h"
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/kube_cert_api.h"
#include "kube/client.h"
#include "kube/config.h"
#include "runtime/file_util.h"
#include "runtime/flags.h"
#include "runtime/log.h"

namespace wasd::cmd {
namespace {

using runtime::Logger;

constexpr char kCertsUsage[] =
    "Usage: wasd certs <generate|inject-ca|rotate|uninstall> [flags]\n\n"
    "  generate   make a CA and a serving certificate for the webhook Service\n"
    "  inject-ca  write a CA bundle into webhook configurations\n"
    "  rotate     keep a TLS Secret renewed and its CA injected\n"
    "  uninstall  delete the webhook configurations and the Secret rotate made\n\n"
    "Run 'wasd certs <subcommand> --help' for its flags.\n";

int RunGenerate(int argc, const char* const* argv) {
  GenerateSettings settings;
  runtime::FlagSet flags = GenerateFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  certs::GenerateOptions& o = settings.options;
  o.now = std::chrono::system_clock::now();

  const Logger logger(settings.log);
  certs::GenerateResult result;
  const base::Status st = certs::GenerateToDirectory(o, &result);
  if (!st.ok()) {
    logger.Error("certs generate failed", {{"error", st.message()}, {"outDir", o.out_dir}});
    return runtime::kExitFailed;
  }
  logger.Info("certificates written", {{"outDir", o.out_dir},
                                       {"caCreated", result.ca_created},
                                       {"keyType", certs::KeyTypeName(o.key_type)},
                                       {"days", o.leaf_days},
                                       {"dnsNames", result.dns_names},
                                       {"ipAddresses", result.ip_addresses}});
  return runtime::kExitOk;
}

// Loads the client config; logs and returns false when it is unusable.
bool LoadKubeConfig(const ConnectionSettings& connection, const Logger& logger, kube::Config* out) {
  auto cfg = LoadConnection(connection);
  if (!cfg.ok()) {
    logger.Error("cannot load Kubernetes client configuration",
                 {{"error", cfg.status().ToString()}});
    return false;
  }
  *out = std::move(cfg).value();
  return true;
}

void LogInjected(const Logger& logger, const std::vector<certs::InjectOutcome>& outcomes) {
  for (const certs::InjectOutcome& o : outcomes) {
    if (o.missing) {
      logger.Info("webhook configuration not found; skipped (--skip-missing-webhook-config)",
                  {{"name", o.name}});
      continue;
    }
    logger.Info(o.patched > 0 ? "caBundle injected" : "caBundle already current",
                {{"resource", certs::WebhookKindPlural(o.kind)},
                 {"name", o.name},
                 {"webhooks", o.webhooks},
                 {"patched", o.patched}});
  }
}

int RunInjectCa(int argc, const char* const* argv) {
  InjectCaSettings settings;
  runtime::FlagSet flags = InjectCaFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  const std::string& ca_file = settings.ca_file;
  const std::vector<std::string>& names = settings.webhook_configs;

  const Logger logger(settings.log);
  // A CA bundle is a few certificates; 1 MiB is far beyond any real one.
  base::Result<std::string> ca_read = runtime::ReadSmallFile(ca_file, std::size_t{1} << 20);
  base::Status st = ca_read.status();
  const std::string ca_pem = ca_read.ok() ? std::move(ca_read).value() : std::string();
  certs::X509Ptr parsed;
  if (st.ok()) st = certs::ParseCertificatePem(ca_pem, &parsed);
  if (!st.ok()) {
    logger.Error("cannot use the CA file", {{"file", ca_file}, {"error", st.message()}});
    return runtime::kExitFailed;
  }
  kube::Config config;
  if (!LoadKubeConfig(settings.connection, logger, &config)) return runtime::kExitUsage;
  kube::Client client(config);
  KubeCertApi api(&client);
  std::vector<certs::InjectOutcome> outcomes;
  st = certs::InjectCaBundle(api, names, ca_pem, &outcomes);
  LogInjected(logger, outcomes);
  if (!st.ok()) {
    logger.Error("certs inject-ca failed", {{"error", st.message()}});
    return runtime::kExitFailed;
  }
  return runtime::kExitOk;
}

// Waits up to `timeout` for SIGTERM or SIGINT (blocked by the caller).
// Returns true when one arrived.
bool WaitForStopSignal(const sigset_t& signals, std::chrono::seconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count());
  while (true) {
    const int sig = sigtimedwait(&signals, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) return true;
    if (sig < 0 && errno == EINTR) continue;  // another signal; keep waiting
    return false;                             // EAGAIN: the interval passed
  }
}

void LogRotation(const Logger& logger, const certs::RotationOptions& o,
                 const certs::RotationReport& r) {
  const std::string secret = o.ns + "/" + o.secret_name;
  if (r.decision.action == certs::RotationAction::kLeaveForeign) {
    logger.Warn("secret is not managed by wasd; leaving it and its CA alone",
                {{"secret", secret}, {"reason", r.decision.reason}});
    return;
  }
  logger.Info(r.secret_written ? "certificate rotated" : "certificate current",
              {{"secret", secret},
               {"action", certs::RotationActionName(r.decision.action)},
               {"reason", r.decision.reason},
               {"serial", r.leaf_serial},
               {"notAfter", base::FormatRfc3339(r.leaf_not_after)}});
  LogInjected(logger, r.injected);
}

// After a failed pass the next try comes this soon (or at the check
// interval, if shorter): quick enough to ride out an API server restart,
// slow enough not to hammer a broken one.
constexpr std::chrono::seconds kRetryAfterFailure{30};

// Checks what the flags cannot check one by one; "" when usable.
std::string CheckRotate(const RotateSettings& r) {
  if (r.options.renew_before >= std::chrono::hours(24) * r.options.leaf_days) {
    return "--renew-before (" + base::FormatDuration(r.options.renew_before) +
           ") must be shorter than the certificate lifetime (--days " +
           std::to_string(r.options.leaf_days) + ")";
  }
  return {};
}

// Rotation passes until a stop signal (or after one pass with --once).
int RotateLoop(certs::CertApi& api, const RotateSettings& cmd, const sigset_t& stop_signals,
               const Logger& logger) {
  while (true) {
    certs::RotationReport report;
    const base::Status st =
        certs::RotateOnce(api, cmd.options, std::chrono::system_clock::now(), &report);
    if (st.ok()) {
      LogRotation(logger, cmd.options, report);
    } else {
      logger.Error("certificate rotation failed", {{"error", st.message()}});
    }
    if (cmd.once) return st.ok() ? runtime::kExitOk : runtime::kExitFailed;
    const std::chrono::seconds wait =
        st.ok() ? cmd.interval : std::min(cmd.interval, kRetryAfterFailure);
    if (WaitForStopSignal(stop_signals, wait)) {
      logger.Info("certificate rotation stopped");
      return runtime::kExitOk;
    }
  }
}

int RunRotate(int argc, const char* const* argv) {
  RotateSettings cmd;
  runtime::FlagSet flags = RotateFlags(&cmd);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  if (const std::string why = CheckRotate(cmd); !why.empty()) return flags.UsageError(why);

  // SIGTERM/SIGINT are taken synchronously (sigtimedwait) between passes;
  // blocked before any thread exists so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  const Logger logger(cmd.log);
  kube::Config config;
  if (!LoadKubeConfig(cmd.connection, logger, &config)) return runtime::kExitUsage;
  if (cmd.options.ns.empty()) cmd.options.ns = config.namespace_;
  kube::Client client(config);
  KubeCertApi api(&client);
  logger.Info("certificate rotation starting",
              {{"secret", cmd.options.ns + "/" + cmd.options.secret_name},
               {"service", cmd.options.service},
               {"webhookConfigs", cmd.options.webhook_configs},
               {"renewBefore", base::FormatDuration(cmd.options.renew_before)},
               {"checkInterval", base::FormatDuration(cmd.interval)},
               {"apiServer", config.server}});
  return RotateLoop(api, cmd, stop_signals, logger);
}

}  // namespace

int RunCerts(int argc, const char* const* argv) {
  if (argc < 2) {
    std::fputs(kCertsUsage, stderr);
    return runtime::kExitUsage;
  }
  const std::string sub = argv[1];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kCertsUsage, stdout);
    return runtime::kExitOk;
  }
  if (sub == "generate") return RunGenerate(argc - 1, argv + 1);
  if (sub == "inject-ca") return RunInjectCa(argc - 1, argv + 1);
  if (sub == "rotate") return RunRotate(argc - 1, argv + 1);
  if (sub == "uninstall") return RunCertsUninstall(argc - 1, argv + 1);
  std::fprintf(stderr,
               "wasd certs: unknown subcommand \"%s\"\nRun 'wasd certs --help' for usage.\n",
               sub.c_str());
  return runtime::kExitUsage;
}

}  // namespace wasd::cmd
