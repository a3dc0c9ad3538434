// `wasd certs uninstall`: what the chart's pre-delete hook runs (in the wasd
// image, so no kubectl image is needed): deletes the webhook configurations
// and, when given, the TLS Secret that `wasd certs rotate` made.
//
//   wasd certs uninstall --webhook-config NAME... [--secret NS/NAME]... [--kubeconfig FILE]
//
// Idempotent: an object already gone counts as removed. A Secret is deleted
// only when it carries wasd.io/managed-certificate: "true" (the mark of
// `wasd certs rotate`), the same rule rotate follows for writing it: a
// Secret wasd did not make is left alone, with a warning. Every object is
// tried even after a failure; the exit code is 0 when all are gone (or left
// alone on purpose), 1 otherwise, 2 for bad flags.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "certs/tls_secret.h"
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "runtime/flags.h"
#include "runtime/log.h"

namespace wasd::cmd {
namespace {

using runtime::Logger;

// Deletes one object; NotFound is success.
bool DeleteObject(kube::Client& client, const kube::Resource& resource, const std::string& ns,
                  const std::string& name, const Logger& log) {
  base::Result<nlohmann::json> r = client.Delete(resource, ns, name);
  if (r.ok()) {
    log.Info("deleted", {{"resource", resource.plural}, {"namespace", ns}, {"name", name}});
    return true;
  }
  if (r.status().not_found()) {
    log.Info("already gone", {{"resource", resource.plural}, {"namespace", ns}, {"name", name}});
    return true;
  }
  log.Error("cannot delete", {{"resource", resource.plural},
                              {"namespace", ns},
                              {"name", name},
                              {"error", r.status().ToString()}});
  return false;
}

bool DeleteManagedSecret(kube::Client& client, const std::string& ns, const std::string& name,
                         const Logger& log) {
  const kube::Resource secrets{"v1", "secrets"};
  base::Result<nlohmann::json> got = client.Get(secrets, ns, name);
  if (!got.ok()) {
    if (got.status().not_found()) {
      log.Info("already gone", {{"resource", "secrets"}, {"namespace", ns}, {"name", name}});
      return true;
    }
    log.Error("cannot read", {{"resource", "secrets"},
                              {"namespace", ns},
                              {"name", name},
                              {"error", got.status().ToString()}});
    return false;
  }
  if (!certs::IsManagedSecret(got.value())) {
    log.Warn(
        "left alone: not made by wasd certs rotate (no wasd.io/managed-certificate "
        "annotation)",
        {{"resource", "secrets"}, {"namespace", ns}, {"name", name}});
    return true;
  }
  return DeleteObject(client, secrets, ns, name, log);
}

}  // namespace

int RunCertsUninstall(int argc, const char* const* argv) {
  UninstallSettings settings;
  runtime::FlagSet flags = UninstallFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  const std::vector<std::string>& configs = settings.webhook_configs;
  std::vector<std::pair<std::string, std::string>> secrets;
  for (const std::string& s : settings.secrets) {
    const std::size_t slash = s.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() ||
        s.find('/', slash + 1) != std::string::npos) {
      return flags.UsageError("--secret wants NAMESPACE/NAME, got \"" + s + "\"");
    }
    secrets.emplace_back(s.substr(0, slash), s.substr(slash + 1));
  }
  const Logger log(settings.log);
  auto config = LoadConnection(settings.connection);
  if (!config.ok()) {
    log.Error("cannot load Kubernetes client configuration",
              {{"error", config.status().ToString()}});
    return runtime::kExitUsage;
  }
  kube::Client client(config.value());
  bool ok = true;
  // Configurations first: no request may reach a webhook that is going away.
  for (const std::string& name : configs) {
    ok = DeleteObject(client, kube::MutatingWebhookConfigurations(), "", name, log) && ok;
    ok = DeleteObject(client, kube::ValidatingWebhookConfigurations(), "", name, log) && ok;
  }
  for (const auto& [ns, name] : secrets) ok = DeleteManagedSecret(client, ns, name, log) && ok;
  return ok ? runtime::kExitOk : runtime::kExitFailed;
}

}  // namespace wasd::cmd
