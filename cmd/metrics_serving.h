// The --metrics-secure wiring both daemons share: the usage check of the
// flags and the SecureMetrics that gives the metrics server its TLS and its
// TokenReview/SubjectAccessReview gate.
#ifndef WASD_CMD_METRICS_SERVING_H_
#define WASD_CMD_METRICS_SERVING_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "kube/config.h"
#include "metricsauth/secure_metrics.h"
#include "runtime/http_server.h"
#include "runtime/listen.h"
#include "runtime/log.h"

namespace wasd::cmd {

// A usage error of the metrics flags, or "".
std::string MetricsServingError(const runtime::ListenAddress& probes,
                                const runtime::ListenAddress& metrics,
                                const runtime::MetricsServing& serving);

// Null without error when /metrics is off or plain. `api` is the daemon's
// API server configuration (the reviews use its credentials); without it
// (the webhook runs without API access) every scrape is answered 503 with
// the reason, and a warning says so at start. The pair
// defaults to `default_cert`/`default_key` (empty: self-signed).
base::Result<std::unique_ptr<metricsauth::SecureMetrics>> MakeSecureMetrics(
    const runtime::ListenAddress& metrics, const runtime::MetricsServing& serving,
    const std::string& default_cert, const std::string& default_key,
    const base::Result<kube::Config>& api, const runtime::Logger& logger);

}  // namespace wasd::cmd

#endif  // WASD_CMD_METRICS_SERVING_H_
