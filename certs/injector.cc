#include "certs/injector.h"

#include "certs/ca_bundle.h"

namespace wasd::certs {
namespace {

std::string Describe(WebhookKind kind, const std::string& name) {
  return std::string(WebhookKindPlural(kind)) + "/" + name;
}

// Patches one configuration that is known to exist (`current` as read).
Status InjectOne(CertApi& api, WebhookKind kind, const std::string& name, nlohmann::json current,
                 std::string_view ca_pem, InjectOutcome* outcome) {
  outcome->kind = kind;
  outcome->name = name;
  for (int attempt = 0; attempt < kMaxPatchAttempts; ++attempt) {
    nlohmann::json patch;
    Status st = BuildCaBundlePatch(current, ca_pem, &patch);
    if (!st.ok()) return Status::Error(Describe(kind, name) + ": " + st.message());
    const auto webhooks = current.find("webhooks");
    outcome->webhooks =
        webhooks != current.end() && webhooks->is_array() ? static_cast<int>(webhooks->size()) : 0;
    if (patch.empty()) return Status::Ok();  // already current (or patched by us just now)

    int changes = 0;
    for (const auto& op : patch) changes += op.at("op") != "test" ? 1 : 0;
    ++outcome->attempts;
    ApiReply reply = api.PatchWebhookConfig(kind, name, patch);
    if (reply.ok()) {
      outcome->patched = changes;
      return Status::Ok();
    }
    if (reply.code != ApiReply::Code::kConflict) {
      return Status::Error("patching " + Describe(kind, name) + ": " + reply.message);
    }
    reply = api.GetWebhookConfig(kind, name);
    if (!reply.ok()) {
      return Status::Error("re-reading " + Describe(kind, name) + ": " + reply.message);
    }
    current = std::move(reply.object);
  }
  return Status::Error(Describe(kind, name) + " kept changing; gave up after " +
                       std::to_string(kMaxPatchAttempts) + " attempts");
}

}  // namespace

std::string_view WebhookKindPlural(WebhookKind kind) {
  return kind == WebhookKind::kMutating ? "mutatingwebhookconfigurations"
                                        : "validatingwebhookconfigurations";
}

Status InjectCaBundle(CertApi& api, const std::vector<std::string>& names, std::string_view ca_pem,
                      std::vector<InjectOutcome>* outcomes, bool skip_missing) {
  for (const std::string& name : names) {
    bool found = false;
    for (WebhookKind kind : {WebhookKind::kMutating, WebhookKind::kValidating}) {
      ApiReply reply = api.GetWebhookConfig(kind, name);
      if (reply.code == ApiReply::Code::kNotFound) continue;
      if (!reply.ok()) {
        return Status::Error("reading " + Describe(kind, name) + ": " + reply.message);
      }
      found = true;
      InjectOutcome outcome;
      Status st = InjectOne(api, kind, name, std::move(reply.object), ca_pem, &outcome);
      outcomes->push_back(outcome);
      if (!st.ok()) return st;
    }
    if (!found && skip_missing) {
      InjectOutcome outcome;
      outcome.name = name;
      outcome.missing = true;
      outcomes->push_back(outcome);
    } else if (!found) {
      return Status::Error("webhook configuration \"" + name +
                           "\" not found (neither mutating nor validating)");
    }
  }
  return Status::Ok();
}

}  // namespace wasd::certs
