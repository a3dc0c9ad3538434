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
// It also says which scheduling.k8s.io version serves Workloads and
// PodGroups (discovery, v1 preferred: the one the reconciler will use), and
// warns when none does; that is information, not a check (the webhook works
// without it).
//
// Exit codes: 0 both held; 1 a check failed (the log says which and what the
// API server answered); 2 bad flags or no usable client configuration.
// Needs only `create deployments` in --namespace.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "reconciler/scheduling_api.h"
#include "runtime/flags.h"
#include "runtime/log.h"

namespace wasd::cmd {
namespace {

using nlohmann::json;

using runtime::Logger;

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

// Information: the scheduling.k8s.io version the reconciler will use.
void ReportSchedulingApi(kube::Client& client, const kube::RequestOptions& options,
                         const Logger& log) {
  kube::RequestOptions read = options;
  read.dry_run = false;
  const reconciler::SchedulingDiscovery d = reconciler::DiscoverSchedulingApi(
      [&](std::string_view gv) { return client.GetGroupVersion(gv, read); });
  if (!d.ok()) {
    log.Warn("cannot discover the scheduling.k8s.io versions", {{"error", d.error.ToString()}});
    return;
  }
  if (!d.api.served()) {
    log.Warn(
        "scheduling.k8s.io serves no Workloads and PodGroups (neither v1 nor v1beta1): the "
        "webhook gives the pods of native-backend Deployments wasd's gate, and the reconciler "
        "creates their groups and lifts it once the API is served",
        {{"check", "schedulingApi"}});
    return;
  }
  log.Info("Workloads and PodGroups are served; wasd uses " + d.api.GroupVersion(),
           {{"check", "schedulingApi"}, {"served", reconciler::DescribeDiscovery(d)}});
}

}  // namespace

int RunSelftest(int argc, const char* const* argv) {
  SelftestSettings settings;
  runtime::FlagSet flags = SelftestFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  const std::string& ns = settings.ns;
  const Logger log(settings.log);
  if (const std::string warning = DeprecatedTimeoutWarning(flags, &settings.connection);
      !warning.empty()) {
    log.Warn(warning, {{"flag", "timeout"}, {"replacement", "request-timeout"}});
  }
  auto config = LoadConnection(settings.connection);
  if (!config.ok()) {
    log.Error("cannot load Kubernetes client configuration",
              {{"error", config.status().ToString()}});
    return runtime::kExitUsage;
  }
  kube::Client client(config.value());
  kube::RequestOptions options;
  options.timeout = settings.connection.request_timeout;
  options.dry_run = true;
  ReportSchedulingApi(client, options, log);
  const bool denied = CheckDenial(client, ns, options, log);
  const bool mutated = CheckMutation(client, ns, options, log);
  if (!(denied && mutated)) return runtime::kExitFailed;
  log.Info("selftest passed", {{"namespace", ns}});
  return runtime::kExitOk;
}

}  // namespace wasd::cmd
