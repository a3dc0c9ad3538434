// KubeCertApi: certs::CertApi over wasd's Kubernetes client — Secrets and
// webhook configurations for `wasd certs inject-ca` and `rotate`. Answers
// map to ApiReply codes: 404 → kNotFound, 409 and 422 (a failed JSON-patch
// `test`) → kConflict, anything else → kError with the status line.
//
// Thread-safe as kube::Client.
#ifndef WASD_CMD_KUBE_CERT_API_H_
#define WASD_CMD_KUBE_CERT_API_H_

#include <string>

#include <nlohmann/json.hpp>

#include "certs/cert_api.h"
#include "kube/client.h"

namespace wasd::cmd {

class KubeCertApi : public certs::CertApi {
 public:
  explicit KubeCertApi(kube::Client* client) : client_(client) {}

  certs::ApiReply GetSecret(const std::string& ns, const std::string& name) override;
  certs::ApiReply CreateSecret(const std::string& ns, const nlohmann::json& secret) override;
  certs::ApiReply UpdateSecret(const std::string& ns, const std::string& name,
                               const nlohmann::json& secret) override;
  certs::ApiReply GetWebhookConfig(certs::WebhookKind kind, const std::string& name) override;
  certs::ApiReply PatchWebhookConfig(certs::WebhookKind kind, const std::string& name,
                                     const nlohmann::json& json_patch) override;

 private:
  kube::Client* client_;
};

}  // namespace wasd::cmd

#endif  // WASD_CMD_KUBE_CERT_API_H_
