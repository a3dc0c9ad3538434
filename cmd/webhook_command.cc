// `wasd webhook`: parses the flags, picks the Deployment source for scale
// reviews, and runs the WebhookServer until it is shut down.
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/metrics_serving.h"
#include "kube/config.h"
#include "runtime/log.h"
#include "server/deployment_source.h"
#include "server/kube_deployment_source.h"
#include "server/webhook_config.h"
#include "server/webhook_server.h"

namespace wasd::cmd {
namespace {

using runtime::Logger;
using server::DeploymentSource;
using server::WebhookConfig;

// The Deployment source for scale reviews: the API server named by
// --kubeconfig, else $KUBECONFIG, in-cluster config or ~/.kube/config, with
// --context/--cluster/--user choosing within it. Returns null (after
// logging) when --kubeconfig names an unusable file or a --context,
// --cluster or --user was given that the configuration found cannot honour.
// Without any config at all the webhook still serves everything else and
// answers scale reviews 503, saying why.
std::unique_ptr<DeploymentSource> MakeDeploymentSource(
    const WebhookConfig& config, const base::Result<kube::Config>& kube_config,
    const Logger& logger) {
  if (!kube_config.ok()) {
    const std::string reason = kube_config.status().message();
    const kube::KubeconfigSelection& sel = config.kube_selection;
    // What the operator asked for explicitly must work: no 503 fallback.
    if (!config.kubeconfig.empty() || !sel.context.empty() || !sel.cluster.empty() ||
        !sel.user.empty()) {
      logger.Error(
          "cannot use the Kubernetes configuration named by --kubeconfig, --context, --cluster or "
          "--user",
          {{"kubeconfig", config.kubeconfig},
           {"context", sel.context},
           {"cluster", sel.cluster},
           {"user", sel.user},
           {"error", reason}});
      return nullptr;
    }
    logger.Warn("no Kubernetes API access: deployments/scale reviews will be answered 503",
                {{"reason", reason}});
    return std::make_unique<server::UnavailableDeploymentSource>("no Kubernetes API access: " +
                                                                 reason);
  }
  logger.Info("Kubernetes API access for deployments/scale reviews",
              {{"server", kube_config.value().server}, {"source", kube_config.value().source}});
  return std::make_unique<server::KubeDeploymentSource>(kube_config.value(), config.lookup_timeout);
}

}  // namespace

int RunWebhook(int argc, const char* const* argv) {
  WebhookConfig config;
  runtime::FlagSet flags = WebhookFlags(&config);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  if (std::string e = BackendFlagsError(config.backends); !e.empty()) return flags.UsageError(e);
  if (config.api_check_interval > std::chrono::seconds(30)) {
    return flags.UsageError(
        "--api-check-interval: at most 30s (a cluster that stops serving the "
        "Workload API must get gated pods within that)");
  }
  if (std::string e = MetricsServingError(config.health_probe_address, config.metrics_address,
                                          config.metrics_serving);
      !e.empty())
    return flags.UsageError(e);
  // A client that disconnects mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  const Logger logger(config.log);
  try {
    const base::Result<kube::Config> kube_config =
        LoadKubeconfig(config.kubeconfig, config.kube_selection);
    std::unique_ptr<DeploymentSource> deployments =
        MakeDeploymentSource(config, kube_config, logger);
    if (!deployments) return 1;
    base::Result<std::unique_ptr<metricsauth::SecureMetrics>> secure_metrics =
        MakeSecureMetrics(config.metrics_address, config.metrics_serving, config.tls_cert_file,
                          config.tls_key_file, kube_config, logger);
    if (!secure_metrics.ok()) {
      logger.Error("cannot start the webhook", {{"error", secure_metrics.status().message()}});
      return 1;
    }
    if (secure_metrics.value()) config.metrics_security = secure_metrics.value()->Security();
    server::WebhookServer server(config, logger, std::move(deployments));
    return server.Run();
  } catch (const std::exception& e) {
    logger.Error("webhook failed", {{"error", e.what()}});
    return 1;
  }
}

}  // namespace wasd::cmd
