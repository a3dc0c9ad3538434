#include "cmd/kube_cert_api.h"

#include <utility>

namespace wasd::cmd {

namespace {

using certs::ApiReply;
using certs::WebhookKind;

kube::Resource Secrets() { return kube::Resource{"v1", "secrets"}; }

kube::Resource Configs(WebhookKind kind) {
  return kind == WebhookKind::kMutating ? kube::MutatingWebhookConfigurations()
                                        : kube::ValidatingWebhookConfigurations();
}

ApiReply Reply(base::Result<nlohmann::json> r) {
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

}  // namespace

ApiReply KubeCertApi::GetSecret(const std::string& ns, const std::string& name) {
  return Reply(client_->Get(Secrets(), ns, name));
}

ApiReply KubeCertApi::CreateSecret(const std::string& ns, const nlohmann::json& secret) {
  return Reply(client_->Create(Secrets(), ns, secret));
}

ApiReply KubeCertApi::UpdateSecret(const std::string& ns, const std::string& name,
                                   const nlohmann::json& secret) {
  return Reply(client_->Update(Secrets(), ns, name, secret));
}

ApiReply KubeCertApi::GetWebhookConfig(WebhookKind kind, const std::string& name) {
  return Reply(client_->Get(Configs(kind), "", name));
}

ApiReply KubeCertApi::PatchWebhookConfig(WebhookKind kind, const std::string& name,
                                         const nlohmann::json& json_patch) {
  return Reply(client_->Patch(Configs(kind), "", name, kube::PatchType::kJson, json_patch));
}

}  // namespace wasd::cmd
