// `wasd selftest`: proves an installed wasd end to end, the way `helm test`
// runs it (charts/wasd/templates/helm-test.yaml): API server → webhook
// configurations → Service → TLS → `wasd webhook`, for both the validating
// and the mutating Deployment webhook. It submits two server-side dry-run
// creates (dryRun=All: admission runs, nothing is stored):
//
//  1. a Deployment that opts in with gang minCount 2 and 1 replica (rule H1)
//     must be refused with wasd's field error;
//  2. the same Deployment with minCount 1 must be accepted, and the object
//     the API server returns must carry the marker label wasd.io/managed
//     that only wasd's mutating webhook adds.
//
// Exit codes: 0 both held; 1 a check failed (the log says which and what the
// API server answered); 2 bad flags or no usable client configuration.
// Needs only `create deployments` in --namespace.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "certs/cli_flags.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "server/commands.h"
#include "server/log.h"
#include "server/webhook_config.h"

namespace wasd::server {
namespace {

using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] =
    "Usage: wasd selftest [--namespace NS] [--kubeconfig FILE] [--timeout D]\n\n"
    "Checks an installed wasd end to end with two server-side dry-run creates\n"
    "(nothing is stored): a Deployment opting in with gang minCount above its\n"
    "replicas must be denied by wasd, a valid one must come back with the marker\n"
    "label wasd.io/managed added by wasd's mutating webhook. Exit 0: both held;\n"
    "1: a check failed; 2: bad flags or no client configuration.\n\n"
    "Flags:\n"
    "  --namespace NS     namespace wasd serves to submit to (default \"default\")\n"
    "  --kubeconfig FILE  else $KUBECONFIG, in-cluster, ~/.kube/config\n"
    "  --timeout D        deadline of each request (default 30s)\n";

constexpr std::string_view kMarker = "wasd.io/managed";

// An opted-in Deployment with `replicas` pods and an explicit gang minCount.
json ProbeDeployment(const std::string& ns, int replicas, int min_count) {
  const json config = {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}};
  const json labels = {{"app.kubernetes.io/name", "wasd-selftest"}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"generateName", "wasd-selftest-"},
            {"namespace", ns},
            {"annotations", {{"wasd.io/scheduling", config.dump()}}}}},
          {"spec",
           {{"replicas", replicas},
            {"strategy", {{"type", "Recreate"}}},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"containers",
                 json::array({{{"name", "probe"}, {"image", "wasd-selftest:none"}}})}}}}}}}};
}

bool HasMarker(const json& object, std::initializer_list<const char*> path) {
  const json* node = &object;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return false;
    node = &(*node)[key];
  }
  return node->is_object() && node->contains(kMarker) && (*node)[kMarker] == "true";
}

// Check 1: the broken Deployment is refused by wasd (not accepted, not
// refused for another reason such as an unreachable webhook).
bool CheckDenial(kube::Client& client, const std::string& ns, const kube::RequestOptions& options,
                 const Logger& log) {
  base::Result<json> r = client.Create(kube::Deployments(), ns, ProbeDeployment(ns, 1, 2), options);
  if (r.ok()) {
    log.Error(
        "selftest failed: the API server accepted a Deployment that wasd must deny; the "
        "validating webhook configuration is missing or does not send opted-in "
        "Deployments to wasd",
        {{"check", "denial"}, {"namespace", ns}});
    return false;
  }
  const base::Status& s = r.status();
  const std::string& msg = s.message();
  const bool from_wasd = s.http_code() == 422 &&
                         msg.find("admission webhook") != std::string::npos &&
                         msg.find("wasd.io/scheduling") != std::string::npos &&
                         msg.find("minCount") != std::string::npos;
  if (!from_wasd) {
    log.Error(
        "selftest failed: the broken Deployment was refused, but not by wasd's rule (an "
        "unreachable webhook, a TLS or CA problem, or RBAC)",
        {{"check", "denial"}, {"namespace", ns}, {"code", s.http_code()}, {"error", s.ToString()}});
    return false;
  }
  log.Info("denied by wasd as expected",
           {{"check", "denial"}, {"namespace", ns}, {"message", msg}});
  return true;
}

// Check 2: a valid Deployment is accepted and mutated by wasd.
bool CheckMutation(kube::Client& client, const std::string& ns, const kube::RequestOptions& options,
                   const Logger& log) {
  base::Result<json> r = client.Create(kube::Deployments(), ns, ProbeDeployment(ns, 1, 1), options);
  if (!r.ok()) {
    log.Error("selftest failed: a valid opted-in Deployment was refused",
              {{"check", "mutation"}, {"namespace", ns}, {"error", r.status().ToString()}});
    return false;
  }
  const json& obj = r.value();
  if (!HasMarker(obj, {"metadata", "labels"}) ||
      !HasMarker(obj, {"spec", "template", "metadata", "labels"})) {
    log.Error(
        "selftest failed: the accepted Deployment lacks the label wasd.io/managed; the "
        "mutating webhook configuration is missing or does not reach wasd",
        {{"check", "mutation"}, {"namespace", ns}});
    return false;
  }
  log.Info("accepted and marked by wasd as expected", {{"check", "mutation"}, {"namespace", ns}});
  return true;
}

}  // namespace

int RunSelftest(int argc, char** argv) {
  const certs::FlagSpec spec{{"namespace", "kubeconfig", "timeout"}, {}, {}};
  certs::ParsedFlags flags;
  std::string error;
  if (!certs::ParseFlags(argc, argv, spec, &flags, &error)) {
    std::fprintf(stderr, "wasd selftest: %s (see 'wasd selftest --help')\n", error.c_str());
    return kExitUsage;
  }
  if (flags.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  std::chrono::milliseconds timeout{30'000};
  if (const std::string t = flags.Get("timeout"); !t.empty() && !ParseDuration(t, &timeout)) {
    std::fprintf(stderr, "wasd selftest: --timeout: not a duration: %s\n", t.c_str());
    return kExitUsage;
  }
  const std::string ns = flags.Get("namespace", "default");
  const Logger log;
  auto config = kube::LoadConfig(kube::SourcesFromEnvironment(flags.Get("kubeconfig")));
  if (!config.ok()) {
    log.Error("cannot load Kubernetes client configuration",
              {{"error", config.status().ToString()}});
    return kExitUsage;
  }
  kube::Client client(config.value());
  kube::RequestOptions options;
  options.timeout = timeout;
  options.dry_run = true;
  const bool denied = CheckDenial(client, ns, options, log);
  const bool mutated = CheckMutation(client, ns, options, log);
  if (!(denied && mutated)) return kExitFailed;
  log.Info("selftest passed", {{"namespace", ns}});
  return kExitOk;
}

}  // namespace wasd::server
