#include "cmd/metrics_serving.h"

namespace wasd::cmd {

std::string MetricsServingError(const runtime::ListenAddress& probes,
                                const runtime::ListenAddress& metrics,
                                const runtime::MetricsServing& serving) {
  if (serving.cert_file.empty() != serving.key_file.empty())
    return "--metrics-cert-file and --metrics-key-file go together: give both or neither";
  if (serving.secure && metrics.enabled && probes.enabled && metrics.port != 0 &&
      metrics.host == probes.host && metrics.port == probes.port)
    return "--metrics-bind-address: with --metrics-secure, /metrics (HTTPS) cannot share the "
           "plain-HTTP probe port of --health-probe-bind-address; give it a port of its own or "
           "pass --metrics-secure=false";
  return {};
}

base::Result<std::unique_ptr<metricsauth::SecureMetrics>> MakeSecureMetrics(
    const runtime::ListenAddress& metrics, const runtime::MetricsServing& serving,
    const std::string& default_cert, const std::string& default_key,
    const base::Result<kube::Config>& api, const runtime::Logger& logger) {
  if (!metrics.enabled || !serving.secure) return std::unique_ptr<metricsauth::SecureMetrics>();
  if (!api.ok())
    logger.Warn(
        "no Kubernetes API access to check /metrics tokens: every scrape is answered 503 "
        "(pass --metrics-secure=false for plain HTTP, or --metrics-bind-address=0)",
        {{"reason", api.status().message()}});
  metricsauth::SecureMetricsOptions options;
  options.cert_file = serving.cert_file.empty() ? default_cert : serving.cert_file;
  options.key_file = serving.key_file.empty() ? default_key : serving.key_file;
  base::Result<std::unique_ptr<metricsauth::SecureMetrics>> made =
      metricsauth::SecureMetrics::Make(options, api, logger);
  if (made.ok()) {
    logger.Info("/metrics over HTTPS with TokenReview and SubjectAccessReview",
                {{"certificate", made.value()->certificate_source()}});
  }
  return made;
}

}  // namespace wasd::cmd
