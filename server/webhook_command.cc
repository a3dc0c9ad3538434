// `wasd webhook`: parses the flags, picks the Deployment source for scale
// reviews, and runs the WebhookServer until it is shut down.
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "server/commands.h"
#include "server/deployment_source.h"
#include "server/log.h"
#include "server/webhook_config.h"
#include "server/webhook_server.h"

namespace wasd::server {
namespace {

std::unique_ptr<DeploymentSource> MakeDeploymentSource(const WebhookConfig& config,
                                                       const Logger& logger) {
  // The Kubernetes API client is not wired in yet: scale reviews are
  // answered 503 with this reason until it is.
  const std::string reason = "no Kubernetes API client in this build";
  logger.Warn("deployments/scale reviews will be answered 503",
              {{"reason", reason}, {"kubeconfig", config.kubeconfig}});
  return std::make_unique<UnavailableDeploymentSource>(reason);
}

}  // namespace

int RunWebhook(int argc, char** argv) {
  WebhookConfig config;
  std::string error;
  switch (ParseWebhookFlags(argc, argv, &config, &error)) {
    case ParseOutcome::kHelp:
      std::fputs(WebhookUsage().c_str(), stdout);
      return 0;
    case ParseOutcome::kError:
      std::fprintf(stderr, "wasd webhook: %s\nRun 'wasd webhook --help' for usage.\n",
                   error.c_str());
      return 2;
    case ParseOutcome::kRun:
      break;
  }
  // A client that disconnects mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  const Logger logger(config.log_level);
  try {
    WebhookServer server(config, logger, MakeDeploymentSource(config, logger));
    return server.Run();
  } catch (const std::exception& e) {
    logger.Error("webhook failed", {{"error", e.what()}});
    return 1;
  }
}

}  // namespace wasd::server
