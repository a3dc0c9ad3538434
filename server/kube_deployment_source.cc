#include "server/kube_deployment_source.h"

#include "kube/resource.h"

namespace wasd::server {

DeploymentLookup KubeDeploymentSource::Get(const std::string& ns, const std::string& name) {
  kube::RequestOptions options;
  options.timeout = timeout_;
  base::Result<nlohmann::json> got = client_.Get(kube::Deployments(), ns, name, options);
  if (got.ok()) return DeploymentLookup::Found(std::move(got).value());
  if (got.status().not_found()) return DeploymentLookup::NotFound();
  return DeploymentLookup::Unreachable(got.status().ToString());
}

kube::SchedulingDiscovery KubeDeploymentSource::DiscoverScheduling() {
  kube::RequestOptions options;
  options.timeout = timeout_;
  return kube::DiscoverSchedulingApi(
      [&](std::string_view gv) { return client_.GetGroupVersion(gv, options); });
}

}  // namespace wasd::server
