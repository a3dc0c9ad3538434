#include "certs/ca_bundle.h"

#include <vector>

#include "base/base64.h"

namespace wasd::certs {

Status BuildCaBundlePatch(const nlohmann::json& config, std::string_view ca_pem,
                          nlohmann::json* patch) {
  *patch = nlohmann::json::array();
  if (!config.is_object()) return Status::Error("webhook configuration is not a JSON object");
  const auto webhooks = config.find("webhooks");
  if (webhooks == config.end() || webhooks->is_null()) return Status::Ok();  // none registered
  if (!webhooks->is_array()) return Status::Error("webhooks is not an array");

  const std::string bundle = base::Base64Encode(ca_pem);
  nlohmann::json ops = nlohmann::json::array();
  for (std::size_t i = 0; i < webhooks->size(); ++i) {
    const nlohmann::json& webhook = (*webhooks)[i];
    if (!webhook.is_object()) {
      return Status::Error("webhooks[" + std::to_string(i) + "] is not an object");
    }
    const std::string base = "/webhooks/" + std::to_string(i) + "/clientConfig";
    const auto client_config = webhook.find("clientConfig");
    if (client_config == webhook.end() || !client_config->is_object()) {
      ops.push_back({{"op", "add"}, {"path", base}, {"value", {{"caBundle", bundle}}}});
      continue;
    }
    const auto current = client_config->find("caBundle");
    if (current != client_config->end() && current->is_string() &&
        current->get_ref<const std::string&>() == bundle) {
      continue;
    }
    const bool present = current != client_config->end();
    ops.push_back(
        {{"op", present ? "replace" : "add"}, {"path", base + "/caBundle"}, {"value", bundle}});
  }
  if (ops.empty()) return Status::Ok();

  const auto metadata = config.find("metadata");
  if (metadata != config.end() && metadata->is_object()) {
    const auto rv = metadata->find("resourceVersion");
    if (rv != metadata->end() && rv->is_string() && !rv->get_ref<const std::string&>().empty()) {
      patch->push_back({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", *rv}});
    }
  }
  for (auto& op : ops) patch->push_back(std::move(op));
  return Status::Ok();
}

}  // namespace wasd::certs
