#include "certs/ca_bundle.h"

#include <openssl/evp.h>

#include <vector>

namespace wasd::certs {

std::string Base64Encode(std::string_view data) {
  // EVP_EncodeBlock writes 4 characters per 3 input bytes plus a NUL.
  std::vector<unsigned char> out(4 * ((data.size() + 2) / 3) + 1);
  const int n = EVP_EncodeBlock(out.data(), reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  return std::string(reinterpret_cast<const char*>(out.data()), static_cast<std::size_t>(n));
}

Status Base64Decode(std::string_view text, std::string* out) {
  if (text.size() % 4 != 0) return Status::Error("invalid base64: length not a multiple of 4");
  std::vector<unsigned char> buf(3 * (text.size() / 4) + 1);
  const int n = EVP_DecodeBlock(buf.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return Status::Error("invalid base64");
  // EVP_DecodeBlock counts padding as zero bytes; drop one per '='.
  std::size_t len = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '=' && len > 0; --i) --len;
  out->assign(reinterpret_cast<const char*>(buf.data()), len);
  return Status::Ok();
}

Status BuildCaBundlePatch(const nlohmann::json& config, std::string_view ca_pem,
                          nlohmann::json* patch) {
  *patch = nlohmann::json::array();
  if (!config.is_object()) return Status::Error("webhook configuration is not a JSON object");
  const auto webhooks = config.find("webhooks");
  if (webhooks == config.end() || webhooks->is_null()) return Status::Ok();  // none registered
  if (!webhooks->is_array()) return Status::Error("webhooks is not an array");

  const std::string bundle = Base64Encode(ca_pem);
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
    ops.push_back({{"op", present ? "replace" : "add"}, {"path", base + "/caBundle"},
                   {"value", bundle}});
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
