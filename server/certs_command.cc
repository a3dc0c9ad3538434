// `wasd certs`: generate (CA + serving certificate into a directory),
// inject-ca (caBundle into webhook configurations) and rotate (keep a TLS
// Secret renewed and its CA injected, once or in a loop until SIGTERM).
// Flag parsing and wiring only; the work is in certs/.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "certs/cert_api.h"
#include "certs/cli_flags.h"
#include "certs/cert_info.h"
#include "certs/duration.h"
#include "certs/file_util.h"
#include "certs/generate.h"
#include "certs/injector.h"
#include "certs/rotation.h"
#include "kube/client.h"
#include "kube/config.h"
#include "server/commands.h"

namespace wasd::server {
namespace {

using certs::ApiReply;
using certs::FlagSpec;
using certs::ParsedFlags;
using certs::ParseFlags;
using certs::WebhookKind;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// Structured logs: one JSON object per line on stderr, {"time","level","msg",
// ...fields}, written with one fwrite so lines do not interleave. (Own small
// logger: these commands are not on a request path.)
class Logger {
 public:
  void Info(std::string_view msg, nlohmann::json fields = nlohmann::json::object()) const {
    Write("info", msg, std::move(fields));
  }
  void Warn(std::string_view msg, nlohmann::json fields = nlohmann::json::object()) const {
    Write("warn", msg, std::move(fields));
  }
  void Error(std::string_view msg, nlohmann::json fields = nlohmann::json::object()) const {
    Write("error", msg, std::move(fields));
  }

 private:
  static void Write(const char* level, std::string_view msg, nlohmann::json fields) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    std::tm tm{};
    gmtime_r(&ts.tv_sec, &tm);
    char when[40];
    const std::size_t n = std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(when + n, sizeof(when) - n, ".%03ldZ", ts.tv_nsec / 1'000'000);
    nlohmann::ordered_json line = {{"time", when}, {"level", level}, {"msg", msg}};
    for (auto& [key, value] : fields.items()) line[key] = value;
    // Replace invalid UTF-8 (e.g. from a file name) instead of throwing.
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  }
};

constexpr char kCertsUsage[] =
    "Usage: wasd certs <generate|inject-ca|rotate|uninstall> [flags]\n\n"
    "  generate   make a CA and a serving certificate for the webhook Service\n"
    "  inject-ca  write a CA bundle into webhook configurations\n"
    "  rotate     keep a TLS Secret renewed and its CA injected\n"
    "  uninstall  delete the webhook configurations and the Secret rotate made\n\n"
    "Run 'wasd certs <subcommand> --help' for its flags.\n";

constexpr char kCommonFlags[] =
    "  --key-type ecdsa|rsa   key type: ECDSA P-256 (default) or RSA 2048\n"
    "  --days N               serving certificate lifetime in days (default 365)\n"
    "  --ca-days N            CA lifetime in days (default 3650)\n"
    "  --extra-san NAME|IP    additional subjectAltName, repeatable (e.g. localhost, "
    "127.0.0.1)\n";

int UsageError(const char* sub, const std::string& message) {
  std::fprintf(stderr, "wasd certs %s: %s (see 'wasd certs %s --help')\n", sub, message.c_str(),
               sub);
  return kExitUsage;
}

bool ParseDays(const ParsedFlags& f, const char* name, int fallback, int* out,
               std::string* error) {
  const std::string text = f.Get(name);
  if (text.empty()) {
    *out = fallback;
    return true;
  }
  int value = 0;
  bool digits = text.size() <= 6;  // > kMaxDays anyway; keeps stoi in range
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (digits) value = std::stoi(text);
  if (!digits || value < 1 || value > certs::kMaxDays) {
    *error = std::string("--") + name + " must be a whole number of days from 1 to " +
             std::to_string(certs::kMaxDays) + ", got \"" + text + "\"";
    return false;
  }
  *out = value;
  return true;
}

// Reads --key-type, --days, --ca-days; shared by generate and rotate.
bool ParseIssueFlags(const ParsedFlags& f, certs::KeyType* key_type, int* days, int* ca_days,
                     std::string* error) {
  const std::string key = f.Get("key-type", "ecdsa");
  if (!certs::ParseKeyType(key, key_type)) {
    *error = "--key-type must be ecdsa or rsa, got \"" + key + "\"";
    return false;
  }
  return ParseDays(f, "days", 365, days, error) && ParseDays(f, "ca-days", 3650, ca_days, error);
}

std::string IsoTime(certs::SystemTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int RunGenerate(int argc, char** argv) {
  const FlagSpec spec{{"service", "namespace", "out-dir", "days", "ca-days", "key-type"},
                      {"extra-san"},
                      {"force"}};
  ParsedFlags f;
  std::string error;
  if (!ParseFlags(argc, argv, spec, &f, &error)) return UsageError("generate", error);
  if (f.help) {
    std::printf(
        "Usage: wasd certs generate --service NAME --namespace NS --out-dir DIR [flags]\n\n"
        "Makes a CA (or reuses ca.crt/ca.key already in DIR) and a serving certificate for\n"
        "NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local. Writes ca.crt, ca.key,\n"
        "tls.crt and tls.key (keys 0600), each replaced atomically. Files not written by\n"
        "this command are never overwritten unless --force.\n\nFlags:\n"
        "  --service NAME         the webhook Service (required)\n"
        "  --namespace NS         its namespace (required)\n"
        "  --out-dir DIR          output directory, created if missing (required)\n"
        "%s"
        "  --force                replace files this command did not write\n",
        kCommonFlags);
    return kExitOk;
  }
  certs::GenerateOptions o;
  o.service = f.Get("service");
  o.ns = f.Get("namespace");
  o.out_dir = f.Get("out-dir");
  if (o.service.empty()) return UsageError("generate", "--service is required");
  if (o.ns.empty()) return UsageError("generate", "--namespace is required");
  if (o.out_dir.empty()) return UsageError("generate", "--out-dir is required");
  if (!ParseIssueFlags(f, &o.key_type, &o.leaf_days, &o.ca_days, &error)) {
    return UsageError("generate", error);
  }
  o.extra_sans = f.List("extra-san");
  o.force = f.On("force");
  o.now = std::chrono::system_clock::now();

  const Logger logger;
  certs::GenerateResult result;
  const base::Status st = certs::GenerateToDirectory(o, &result);
  if (!st.ok()) {
    logger.Error("certs generate failed", {{"error", st.message()}, {"outDir", o.out_dir}});
    return kExitFailed;
  }
  logger.Info("certificates written",
              {{"outDir", o.out_dir},
               {"caCreated", result.ca_created},
               {"keyType", certs::KeyTypeName(o.key_type)},
               {"days", o.leaf_days},
               {"dnsNames", result.dns_names},
               {"ipAddresses", result.ip_addresses}});
  return kExitOk;
}

// CertApi over wasd's Kubernetes client.
class KubeCertApi : public certs::CertApi {
 public:
  explicit KubeCertApi(kube::Client* client) : client_(client) {}

  ApiReply GetSecret(const std::string& ns, const std::string& name) override {
    return Reply(client_->Get(Secrets(), ns, name));
  }
  ApiReply CreateSecret(const std::string& ns, const nlohmann::json& secret) override {
    return Reply(client_->Create(Secrets(), ns, secret));
  }
  ApiReply UpdateSecret(const std::string& ns, const std::string& name,
                        const nlohmann::json& secret) override {
    return Reply(client_->Update(Secrets(), ns, name, secret));
  }
  ApiReply GetWebhookConfig(WebhookKind kind, const std::string& name) override {
    return Reply(client_->Get(Configs(kind), "", name));
  }
  ApiReply PatchWebhookConfig(WebhookKind kind, const std::string& name,
                              const nlohmann::json& json_patch) override {
    return Reply(client_->Patch(Configs(kind), "", name, kube::PatchType::kJson, json_patch));
  }

 private:
  static kube::Resource Secrets() { return kube::Resource{"v1", "secrets"}; }
  static kube::Resource Configs(WebhookKind kind) {
    return kind == WebhookKind::kMutating ? kube::MutatingWebhookConfigurations()
                                          : kube::ValidatingWebhookConfigurations();
  }
  static ApiReply Reply(base::Result<nlohmann::json> r) {
    if (r.ok()) return {ApiReply::Code::kOk, std::move(r).value(), ""};
    const base::Status& s = r.status();
    ApiReply reply;
    reply.message = s.ToString();
    if (s.not_found()) {
      reply.code = ApiReply::Code::kNotFound;
    } else if (s.conflict() || s.http_code() == 422) {
      // 422 is how the API server answers a failed JSON-patch `test`.
      reply.code = ApiReply::Code::kConflict;
    } else {
      reply.code = ApiReply::Code::kError;
    }
    return reply;
  }

  kube::Client* client_;
};

// Loads the client config; logs and returns false when it is unusable.
bool LoadKubeConfig(const std::string& kubeconfig, const Logger& logger, kube::Config* out) {
  auto cfg = kube::LoadConfig(kube::SourcesFromEnvironment(kubeconfig));
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
    logger.Info(o.patched > 0 ? "caBundle injected" : "caBundle already current",
                {{"resource", certs::WebhookKindPlural(o.kind)},
                 {"name", o.name},
                 {"webhooks", o.webhooks},
                 {"patched", o.patched}});
  }
}

int RunInjectCa(int argc, char** argv) {
  const FlagSpec spec{{"ca-file", "kubeconfig"}, {"webhook-config"}, {}};
  ParsedFlags f;
  std::string error;
  if (!ParseFlags(argc, argv, spec, &f, &error)) return UsageError("inject-ca", error);
  if (f.help) {
    std::printf(
        "Usage: wasd certs inject-ca --ca-file FILE --webhook-config NAME... [--kubeconfig "
        "FILE]\n\n"
        "Sets clientConfig.caBundle of every webhook in each named Mutating- or\n"
        "ValidatingWebhookConfiguration (a name may be either or both) to the CA in FILE.\n"
        "Webhooks that already carry it are left alone; concurrent edits are not clobbered.\n\n"
        "Flags:\n"
        "  --ca-file FILE         PEM CA certificate(s) (required)\n"
        "  --webhook-config NAME  configuration name, repeatable or comma-separated (required)\n"
        "  --kubeconfig FILE      else $KUBECONFIG, in-cluster, ~/.kube/config\n");
    return kExitOk;
  }
  const std::string ca_file = f.Get("ca-file");
  const std::vector<std::string> names = f.List("webhook-config");
  if (ca_file.empty()) return UsageError("inject-ca", "--ca-file is required");
  if (names.empty()) return UsageError("inject-ca", "--webhook-config is required");

  const Logger logger;
  std::string ca_pem;
  base::Status st = certs::ReadSmallFile(ca_file, &ca_pem);
  certs::X509Ptr parsed;
  if (st.ok()) st = certs::ParseCertificatePem(ca_pem, &parsed);
  if (!st.ok()) {
    logger.Error("cannot use the CA file", {{"file", ca_file}, {"error", st.message()}});
    return kExitFailed;
  }
  kube::Config config;
  if (!LoadKubeConfig(f.Get("kubeconfig"), logger, &config)) return kExitFailed;
  kube::Client client(config);
  KubeCertApi api(&client);
  std::vector<certs::InjectOutcome> outcomes;
  st = certs::InjectCaBundle(api, names, ca_pem, &outcomes);
  LogInjected(logger, outcomes);
  if (!st.ok()) {
    logger.Error("certs inject-ca failed", {{"error", st.message()}});
    return kExitFailed;
  }
  return kExitOk;
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
               {"notAfter", IsoTime(r.leaf_not_after)}});
  LogInjected(logger, r.injected);
}

// After a failed pass the next try comes this soon (or at the check
// interval, if shorter): quick enough to ride out an API server restart,
// slow enough not to hammer a broken one.
constexpr std::chrono::seconds kRetryAfterFailure{30};

constexpr char kRotateHelp[] =
    "Usage: wasd certs rotate --service NAME --secret NAME [--namespace NS]\n"
    "                         [--webhook-config NAME...] [flags]\n\n"
    "Keeps the kubernetes.io/tls Secret (ca.crt, ca.key, tls.crt, tls.key) valid: creates\n"
    "it when absent, signs a new serving certificate with the same CA when the current one\n"
    "expires within --renew-before, and injects the CA into the webhook configurations.\n"
    "A Secret without the annotation wasd.io/managed-certificate: \"true\" (supplied by a\n"
    "user or cert-manager) is never written. Runs until SIGTERM unless --once.\n\nFlags:\n"
    "  --service NAME         the webhook Service (required)\n"
    "  --namespace NS         namespace of the Service and Secret (default: the client's)\n"
    "  --secret NAME          the TLS Secret (required)\n"
    "  --webhook-config NAME  configuration to inject the CA into, repeatable\n"
    "  --renew-before DUR     renew this long before notAfter (default 2160h = 90 days)\n"
    "  --check-interval DUR   time between checks (default 1h)\n"
    "  --once                 one pass, then exit (0: done, 1: failed)\n"
    "%s"
    "  --kubeconfig FILE      else $KUBECONFIG, in-cluster, ~/.kube/config\n";

struct RotateCommand {
  certs::RotationOptions options;
  std::chrono::seconds interval{};
  bool once = false;
  std::string kubeconfig;
};

// Fills *cmd from the flags; returns false with *error on a usage error.
bool ParseRotate(const ParsedFlags& f, RotateCommand* cmd, std::string* error) {
  certs::RotationOptions& o = cmd->options;
  o.service = f.Get("service");
  o.ns = f.Get("namespace");
  o.secret_name = f.Get("secret");
  o.webhook_configs = f.List("webhook-config");
  o.extra_sans = f.List("extra-san");
  cmd->once = f.On("once");
  cmd->kubeconfig = f.Get("kubeconfig");
  if (o.service.empty()) *error = "--service is required";
  if (o.secret_name.empty()) *error = "--secret is required";
  if (!error->empty() || !ParseIssueFlags(f, &o.key_type, &o.leaf_days, &o.ca_days, error)) {
    return false;
  }
  const std::string renew_text = f.Get("renew-before", "2160h");
  if (!certs::ParseDuration(renew_text, &o.renew_before)) {
    *error = "--renew-before must be a duration like 2160h, got \"" + renew_text + "\"";
    return false;
  }
  if (o.renew_before >= std::chrono::hours(24) * o.leaf_days) {
    *error = "--renew-before (" + renew_text +
             ") must be shorter than the certificate lifetime (--days " +
             std::to_string(o.leaf_days) + ")";
    return false;
  }
  const std::string interval_text = f.Get("check-interval", "1h");
  if (!certs::ParseDuration(interval_text, &cmd->interval) ||
      cmd->interval < std::chrono::seconds(1)) {
    *error = "--check-interval must be a duration of at least 1s, got \"" + interval_text + "\"";
    return false;
  }
  return true;
}

// Rotation passes until a stop signal (or after one pass with --once).
int RotateLoop(certs::CertApi& api, const RotateCommand& cmd, const sigset_t& stop_signals,
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
    if (cmd.once) return st.ok() ? kExitOk : kExitFailed;
    const std::chrono::seconds wait =
        st.ok() ? cmd.interval : std::min(cmd.interval, kRetryAfterFailure);
    if (WaitForStopSignal(stop_signals, wait)) {
      logger.Info("certificate rotation stopped");
      return kExitOk;
    }
  }
}

int RunRotate(int argc, char** argv) {
  const FlagSpec spec{{"service", "namespace", "secret", "renew-before", "check-interval", "days",
                       "ca-days", "key-type", "kubeconfig"},
                      {"webhook-config", "extra-san"},
                      {"once"}};
  ParsedFlags f;
  std::string error;
  if (!ParseFlags(argc, argv, spec, &f, &error)) return UsageError("rotate", error);
  if (f.help) {
    std::printf(kRotateHelp, kCommonFlags);
    return kExitOk;
  }
  RotateCommand cmd;
  if (!ParseRotate(f, &cmd, &error)) return UsageError("rotate", error);

  // SIGTERM/SIGINT are taken synchronously (sigtimedwait) between passes;
  // blocked before any thread exists so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  const Logger logger;
  kube::Config config;
  if (!LoadKubeConfig(cmd.kubeconfig, logger, &config)) return kExitFailed;
  if (cmd.options.ns.empty()) cmd.options.ns = config.namespace_;
  kube::Client client(config);
  KubeCertApi api(&client);
  logger.Info("certificate rotation starting",
              {{"secret", cmd.options.ns + "/" + cmd.options.secret_name},
               {"service", cmd.options.service},
               {"webhookConfigs", cmd.options.webhook_configs},
               {"renewBefore", certs::FormatDuration(cmd.options.renew_before)},
               {"checkInterval", certs::FormatDuration(cmd.interval)},
               {"apiServer", config.server}});
  return RotateLoop(api, cmd, stop_signals, logger);
}

}  // namespace

int RunCerts(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kCertsUsage, stderr);
    return kExitUsage;
  }
  const std::string sub = argv[1];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kCertsUsage, stdout);
    return kExitOk;
  }
  if (sub == "generate") return RunGenerate(argc - 1, argv + 1);
  if (sub == "inject-ca") return RunInjectCa(argc - 1, argv + 1);
  if (sub == "rotate") return RunRotate(argc - 1, argv + 1);
  if (sub == "uninstall") return RunCertsUninstall(argc - 1, argv + 1);
  std::fprintf(stderr, "wasd certs: unknown subcommand %s (see 'wasd certs --help')\n",
               sub.c_str());
  return kExitUsage;
}

}  // namespace wasd::server
