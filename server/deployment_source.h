// DeploymentSource: where the webhook reads the stored Deployment for a
// deployments/scale review (the Scale object does not carry the scheduling
// config). Get() blocks, so the server calls it only from its lookup worker
// pool, never from an I/O thread, and posts the answer back to the session.
//
// Thread-safety: implementations must allow concurrent Get() calls from
// several worker threads. Get() must not throw (the caller still catches and
// treats an exception as kUnreachable).
#ifndef WASD_SERVER_DEPLOYMENT_SOURCE_H_
#define WASD_SERVER_DEPLOYMENT_SOURCE_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kube/scheduling_api.h"

namespace wasd::server {

struct DeploymentLookup {
  enum class Outcome {
    kFound,        // `deployment` holds the object
    kNotFound,     // the API server says it does not exist
    kUnreachable,  // no answer: `reason` is one line saying why
  };
  Outcome outcome = Outcome::kUnreachable;
  nlohmann::json deployment;
  std::string reason;

  static DeploymentLookup Found(nlohmann::json d) { return {Outcome::kFound, std::move(d), {}}; }
  static DeploymentLookup NotFound() { return {Outcome::kNotFound, nullptr, {}}; }
  static DeploymentLookup Unreachable(std::string why) {
    return {Outcome::kUnreachable, nullptr, std::move(why)};
  }
};

class DeploymentSource {
 public:
  virtual ~DeploymentSource() = default;
  // Reads apps/v1 Deployment `ns`/`name`. Blocks for at most the
  // implementation's own deadline.
  virtual DeploymentLookup Get(const std::string& ns, const std::string& name) = 0;
  // Which scheduling.k8s.io version serves Workloads and PodGroups
  // (kube::DiscoverSchedulingApi, the reconciler's own question). Blocks;
  // called from the server's discovery thread only. The default: no API
  // access, an error.
  virtual kube::SchedulingDiscovery DiscoverScheduling() {
    kube::SchedulingDiscovery d;
    d.error = base::Status::Error("no Kubernetes API access");
    return d;
  }
};

// A source for a webhook started without any API server access: every
// lookup is kUnreachable with `reason`, so scale reviews are answered 503.
class UnavailableDeploymentSource : public DeploymentSource {
 public:
  explicit UnavailableDeploymentSource(std::string reason) : reason_(std::move(reason)) {}
  DeploymentLookup Get(const std::string&, const std::string&) override {
    return DeploymentLookup::Unreachable(reason_);
  }
  kube::SchedulingDiscovery DiscoverScheduling() override {
    kube::SchedulingDiscovery d;
    d.error = base::Status::Error(reason_);
    return d;
  }

 private:
  const std::string reason_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_DEPLOYMENT_SOURCE_H_
