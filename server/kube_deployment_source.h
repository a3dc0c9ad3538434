// KubeDeploymentSource: the production DeploymentSource — a GET of the
// apps/v1 Deployment through wasd's Kubernetes API client, bounded by the
// lookup deadline (--lookup-timeout, retries included).
//
// Outcomes: 200 -> kFound; 404 -> kNotFound (a scale of a Deployment that is
// gone is allowed); anything else (no answer, timeout, TLS failure, 403 from
// missing RBAC, 5xx) -> kUnreachable with the client's one-line reason, which
// the server answers with 503.
//
// Thread-safe: kube::Client allows concurrent calls.
#ifndef WASD_SERVER_KUBE_DEPLOYMENT_SOURCE_H_
#define WASD_SERVER_KUBE_DEPLOYMENT_SOURCE_H_

#include <chrono>
#include <string>

#include "kube/client.h"
#include "kube/config.h"
#include "server/deployment_source.h"

namespace wasd::server {

class KubeDeploymentSource : public DeploymentSource {
 public:
  KubeDeploymentSource(kube::Config config, std::chrono::milliseconds timeout)
      : client_(std::move(config)), timeout_(timeout) {}

  DeploymentLookup Get(const std::string& ns, const std::string& name) override;
  kube::SchedulingDiscovery DiscoverScheduling() override;

 private:
  kube::Client client_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_KUBE_DEPLOYMENT_SOURCE_H_
