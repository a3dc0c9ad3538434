#include "server/webhook_config.h"

#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace wasd::server {
namespace {

// Upper bound for --max-request-bytes: far above any AdmissionReview (see
// the default's comment), low enough that a typo cannot let one request
// claim gigabytes.
constexpr std::uint64_t kMaxRequestBytesCeiling = 64ull * 1024 * 1024;
// Upper bound for thread-count flags: beyond this threads only add contention.
constexpr int kMaxThreads = 256;
// No deadline in this server is meaningful beyond a day.
constexpr double kMaxDurationMs = 24.0 * 3600 * 1000;

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

bool ParseUint(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && p == end;
}

bool ParseBool(std::string_view text, bool* out) {
  if (text == "true" || text == "1") {
    *out = true;
    return true;
  }
  if (text == "false" || text == "0") {
    *out = false;
    return true;
  }
  return false;
}

// One flag: its name, whether it needs a value, and how to apply the value.
// `apply` returns an empty string or a reason the value is unusable.
struct Flag {
  std::string_view name;
  bool is_bool;
  std::function<std::string(std::string_view)> apply;
};

std::function<std::string(std::string_view)> StringTo(std::string* field) {
  return [field](std::string_view v) -> std::string {
    if (v.empty()) return "must not be empty";
    *field = std::string(v);
    return {};
  };
}

std::function<std::string(std::string_view)> DurationTo(std::chrono::milliseconds* field) {
  return [field](std::string_view v) -> std::string {
    std::chrono::milliseconds d;
    if (!ParseDuration(v, &d) || d.count() <= 0) {
      return "want a positive duration such as 500ms, 10s or 2m";
    }
    *field = d;
    return {};
  };
}

std::function<std::string(std::string_view)> NonNegativeDurationTo(
    std::chrono::milliseconds* field) {
  return [field](std::string_view v) -> std::string {
    std::chrono::milliseconds d;
    if (!ParseDuration(v, &d)) return "want a duration such as 0s, 500ms, 5s or 1m";
    *field = d;
    return {};
  };
}

std::function<std::string(std::string_view)> ThreadsTo(int* field, int min) {
  return [field, min](std::string_view v) -> std::string {
    std::uint64_t n = 0;
    if (!ParseUint(v, &n) || n < static_cast<std::uint64_t>(min) || n > kMaxThreads) {
      return "want an integer from " + std::to_string(min) + " to " + std::to_string(kMaxThreads);
    }
    *field = static_cast<int>(n);
    return {};
  };
}

std::function<std::string(std::string_view)> AddressTo(ListenAddress* field) {
  return [field](std::string_view v) -> std::string {
    if (!ParseListenAddress(v, field)) return "want HOST:PORT with an IP address, :PORT, or 0";
    return {};
  };
}

std::vector<Flag> Flags(WebhookConfig* c) {
  return {
      {"tls-cert-file", false, StringTo(&c->tls_cert_file)},
      {"tls-key-file", false, StringTo(&c->tls_key_file)},
      {"client-ca-file", false, StringTo(&c->client_ca_file)},
      {"kubeconfig", false, StringTo(&c->kubeconfig)},
      {"bind-address", false,
       [c](std::string_view v) -> std::string {
         std::string host(v);
         if (!IsIpLiteral(host)) return "want an IP address such as 0.0.0.0 or ::";
         c->bind_address = host;
         return {};
       }},
      {"port", false,
       [c](std::string_view v) -> std::string {
         std::uint64_t n = 0;
         if (!ParseUint(v, &n) || n > 65535) return "want a port from 0 (any free port) to 65535";
         c->port = static_cast<std::uint16_t>(n);
         return {};
       }},
      {"health-probe-bind-address", false, AddressTo(&c->health_probe_address)},
      {"metrics-bind-address", false, AddressTo(&c->metrics_address)},
      {"max-request-bytes", false,
       [c](std::string_view v) -> std::string {
         std::uint64_t n = 0;
         if (!ParseUint(v, &n) || n < 1024 || n > kMaxRequestBytesCeiling) {
           return "want a byte count from 1024 to " + std::to_string(kMaxRequestBytesCeiling);
         }
         c->max_request_bytes = n;
         return {};
       }},
      {"pod-scheduling-gate", true,
       [c](std::string_view v) -> std::string {
         if (!ParseBool(v, &c->pod_scheduling_gate)) return "want true or false";
         return {};
       }},
      {"denial-causes", true,
       [c](std::string_view v) -> std::string {
         if (!ParseBool(v, &c->denial_causes)) return "want true or false";
         return {};
       }},
      {"tls-handshake-timeout", false, DurationTo(&c->handshake_timeout)},
      {"read-timeout", false, DurationTo(&c->read_timeout)},
      {"write-timeout", false, DurationTo(&c->write_timeout)},
      {"idle-timeout", false, DurationTo(&c->idle_timeout)},
      {"shutdown-grace-period", false, DurationTo(&c->shutdown_grace_period)},
      {"shutdown-delay", false, NonNegativeDurationTo(&c->shutdown_delay)},
      {"cert-reload-interval", false, DurationTo(&c->cert_reload_interval)},
      {"lookup-timeout", false, DurationTo(&c->lookup_timeout)},
      {"io-threads", false, ThreadsTo(&c->io_threads, 0)},
      {"lookup-workers", false, ThreadsTo(&c->lookup_workers, 1)},
      {"log-level", false,
       [c](std::string_view v) -> std::string {
         if (!ParseLogLevel(v, &c->log_level)) return "want debug, info, warn or error";
         return {};
       }},
  };
}

}  // namespace

bool ParseDuration(std::string_view text, std::chrono::milliseconds* out) {
  std::size_t unit_at = 0;
  while (unit_at < text.size() &&
         ((text[unit_at] >= '0' && text[unit_at] <= '9') || text[unit_at] == '.')) {
    ++unit_at;
  }
  const std::string_view number = text.substr(0, unit_at);
  const std::string_view unit = text.substr(unit_at);
  if (number.empty() || number.front() == '.' || number.back() == '.') return false;
  double value = 0;
  const char* end = number.data() + number.size();
  auto [p, ec] = std::from_chars(number.data(), end, value);
  if (ec != std::errc() || p != end) return false;
  double scale = 0;
  if (unit == "ms") {
    scale = 1;
  } else if (unit == "s" || unit.empty()) {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else {
    return false;
  }
  const double ms = value * scale;
  if (!std::isfinite(ms) || ms < 0 || ms > kMaxDurationMs) return false;
  *out = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
  return true;
}

bool ParseListenAddress(std::string_view text, ListenAddress* out) {
  if (text == "0") {
    *out = ListenAddress{"", 0, false};
    return true;
  }
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string::npos) return false;
  } else if (host.find(':') != std::string::npos) {
    return false;  // an IPv6 host needs brackets
  }
  if (host.empty()) host = "0.0.0.0";
  if (!IsIpLiteral(host)) return false;
  std::uint64_t port = 0;
  if (!ParseUint(port_text, &port) || port > 65535) return false;
  *out = ListenAddress{host, static_cast<std::uint16_t>(port), true};
  return true;
}

ParseOutcome ParseWebhookFlags(int argc, const char* const* argv, WebhookConfig* config,
                               std::string* error) {
  const std::vector<Flag> flags = Flags(config);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return ParseOutcome::kHelp;
    if (arg.size() < 3 || arg.substr(0, 2) != "--") {
      *error = "unexpected argument \"" + std::string(arg) + "\" (flags start with --)";
      return ParseOutcome::kError;
    }
    arg.remove_prefix(2);
    std::string_view name = arg;
    std::string_view value;
    bool has_value = false;
    if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : flags) {
      if (f.name == name) flag = &f;
    }
    if (flag == nullptr) {
      *error = "unknown flag --" + std::string(name);
      return ParseOutcome::kError;
    }
    if (!has_value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        *error = "flag --" + std::string(name) + " needs a value";
        return ParseOutcome::kError;
      }
    }
    if (std::string why = flag->apply(value); !why.empty()) {
      *error =
          "invalid value \"" + std::string(value) + "\" for --" + std::string(name) + ": " + why;
      return ParseOutcome::kError;
    }
  }
  if (config->tls_cert_file.empty() || config->tls_key_file.empty()) {
    *error = "--tls-cert-file and --tls-key-file are required";
    return ParseOutcome::kError;
  }
  return ParseOutcome::kRun;
}

std::string WebhookUsage() {
  return R"(Usage: wasd webhook --tls-cert-file FILE --tls-key-file FILE [flags]

HTTPS admission server for AdmissionReview admission.k8s.io/v1:
  POST /validate-apps-v1-deployment   Deployments and deployments/scale
  POST /mutate-apps-v1-deployment     Deployments (pod-template marker label)
  POST /mutate-v1-pod                 Pods (PodGroup reference, scheduling gate)
Probes (/healthz, /readyz) and /metrics are plain HTTP on their own addresses.

Flags:
  --tls-cert-file FILE              PEM serving certificate (chain); reloaded on change
  --tls-key-file FILE               PEM private key of the certificate; reloaded on change
  --client-ca-file FILE             require client certificates signed by this CA
  --kubeconfig FILE                 API server access for deployments/scale lookups
                                    (default: in-cluster service account)
  --bind-address ADDR               admission listen address (default 0.0.0.0)
  --port N                          admission port (default 9443)
  --health-probe-bind-address A:P   /healthz and /readyz (default :8081; 0 disables)
  --metrics-bind-address A:P        /metrics (default :8080; 0 disables)
  --max-request-bytes N             largest request body (default 7340032 = 7 MiB)
  --pod-scheduling-gate=BOOL        add the wasd.io/pod-group gate to pods (default true)
  --denial-causes=BOOL              denials carry one status cause per field error, so kubectl
                                    prints them like API-server validation errors (default
                                    true); false: the message only, and kubectl prints
                                    'admission webhook "<name>" denied the request: ...'
  --tls-handshake-timeout D         TLS handshake deadline (default 10s)
  --read-timeout D                  deadline for reading one request (default 30s)
  --write-timeout D                 deadline for writing one response (default 30s)
  --idle-timeout D                  keep-alive wait between requests (default 120s)
  --shutdown-delay D                SIGTERM: keep accepting and answering this long after
                                    readiness turns off, while endpoints drop the pod (default
                                    5s; 0s closes the port at once)
  --shutdown-grace-period D         SIGTERM: after the delay, wait this long for requests in
                                    progress (default 30s)
  --cert-reload-interval D          how often certificate files are checked (default 2s)
  --lookup-timeout D                deadline of a deployments/scale lookup (default 2s)
  --io-threads N                    I/O threads (default: one per CPU)
  --lookup-workers N                threads for Deployment lookups (default 4)
  --log-level LEVEL                 debug, info, warn or error (default info)
  --help                            show this text

Durations: 500ms, 10s, 2m, 1h. Logs: JSON lines on stderr.
SIGTERM/SIGINT: readiness off, keep serving for --shutdown-delay, stop accepting, answer
requests in progress, exit 0. A second signal exits at once.
)";
}

}  // namespace wasd::server
