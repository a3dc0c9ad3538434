// `wasd explain deployment/NAME` (also `kubectl wasd explain`, main.cc): the
// gang doctor (doctor/diagnosis.h) over a live cluster. Reads, in the
// Deployment's namespace: the Deployment, its ReplicaSets and their pods, the
// group objects of its backend (and the native Workload), the
// FailedScheduling Events; cluster-wide: the Nodes and the pods bound to them.
// For the native backend, discovery first says which scheduling.k8s.io
// version serves Workloads and PodGroups (v1 preferred, else v1beta1); the
// Group line names it, and -o json/yaml has it under schedulingApi.
// A read the diagnosis can do without (Events, Nodes, bound pods) that fails
// becomes a note; the others end the command with exit 1.
//
// The reading is reconciler::ObserveLive (reconciler/observe.h), the seam
// the reconciler's doctor shares: this file only prints.
//
// Exit codes (docs/reference/cli.md): 0 the gang is scheduled, 3 pending, 1 an
// error (not found, no access, not opted in), 2 bad flags or no client
// configuration.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/yaml_output.h"
#include "cmd/commands.h"
#include "cmd/deployment_target.h"
#include "cmd/flags.h"
#include "doctor/diagnosis.h"
#include "kube/client.h"
#include "kube/config.h"
#include "objects/quantity.h"
#include "reconciler/observe.h"
#include "runtime/flags.h"

namespace wasd::cmd {
namespace {

using nlohmann::json;

constexpr int kExitPending = 3;
// Timeline lines printed in text; the JSON output has all of them.
constexpr std::size_t kMaxTimelineLines = 40;

void PrintText(const doctor::Diagnosis& d, const std::string& ns, const std::string& name,
               const std::vector<std::string>& notes) {
  std::printf("Deployment:  %s/%s\n", ns.c_str(), name.c_str());
  std::printf("Status:      GangScheduled=%s\n", d.scheduled ? "True" : "False");
  std::printf("Reason:      %s\n", d.reason.c_str());
  std::printf("Message:     %s\n", d.message.c_str());
  std::printf("Next step:   %s\n", d.next_step.c_str());
  if (!d.backend.empty()) std::printf("Backend:     %s\n", d.backend.c_str());
  if (!d.replicaset.empty()) std::printf("ReplicaSet:  %s\n", d.replicaset.c_str());
  if (!d.group_name.empty()) {
    std::printf("Group:       %s %s: %s\n", d.group_kind.c_str(), d.group_name.c_str(),
                d.group_summary.empty() ? "not found" : d.group_summary.c_str());
  }
  const doctor::Counts& c = d.counts;
  std::printf(
      "Members:     replicas %lld, minCount %lld, created %lld, gated by wasd %lld, gated by "
      "others %lld, bound %lld, running %lld, failed %lld, bound before their group %lld\n",
      static_cast<long long>(c.replicas), static_cast<long long>(c.min_count),
      static_cast<long long>(c.created), static_cast<long long>(c.gated_wasd),
      static_cast<long long>(c.gated_other), static_cast<long long>(c.bound),
      static_cast<long long>(c.running), static_cast<long long>(c.failed),
      static_cast<long long>(c.bound_before_group));
  if (d.fit.computed) {
    std::printf("Fit:         %s\n", d.fit.text.c_str());
    std::string per;
    for (const auto& [res, v] : d.fit.requests) {
      per += (per.empty() ? "" : ", ") + res + " " + objects::FormatQuantityMilli(res, v);
    }
    std::printf("             per member: %s\n", per.c_str());
    for (const doctor::DomainFit& dom : d.fit.domains) {
      std::printf("             %s: room for %lld on %lld node%s\n",
                  dom.domain.empty() ? "cluster" : dom.domain.c_str(),
                  static_cast<long long>(dom.room), static_cast<long long>(dom.nodes),
                  dom.nodes == 1 ? "" : "s");
    }
  }
  if (!d.timeline.empty()) {
    std::printf("Timeline:\n");
    std::size_t shown = 0;
    for (const doctor::TimelineEntry& e : d.timeline) {
      if (shown++ == kMaxTimelineLines) {
        std::printf("  ... %zu more (-o json lists them all)\n",
                    d.timeline.size() - kMaxTimelineLines);
        break;
      }
      std::printf("  %-20s  %-32s  %s\n", e.time.c_str(), e.pod.c_str(), e.what.c_str());
    }
  }
  for (const std::string& n : notes) std::printf("Note:        %s\n", n.c_str());
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return runtime::kExitFailed;
}

}  // namespace

int RunExplain(int argc, const char* const* argv) {
  // The one positional argument, TYPE/NAME or TYPE NAME, is taken out first.
  DeploymentTarget target = TakeDeploymentTarget(argc, argv);
  std::vector<const char*>& rest = target.rest;
  const std::string& name = target.name;
  const bool have_target = target.given;
  ExplainSettings s;
  runtime::FlagSet flags = ExplainFlags(&s);
  if (const std::optional<int> rc = flags.ParseOrExit(static_cast<int>(rest.size()), rest.data())) {
    return *rc;
  }
  if (!have_target) {
    return flags.UsageError(
        "no Deployment given (wasd explain deployment/NAME, or deployment NAME)");
  }
  if (name.empty() || name.find('/') != std::string::npos) {
    return flags.UsageError("want deployment/NAME, got deployment/" + name);
  }
  if (std::string e = BackendFlagsError(s.backends); !e.empty()) return flags.UsageError(e);

  if (const std::string warning = DeprecatedTimeoutWarning(flags, &s.connection);
      !warning.empty()) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  auto config = LoadConnection(s.connection);
  if (!config.ok()) {
    Fail("cannot load Kubernetes client configuration: " + config.status().ToString());
    return runtime::kExitUsage;
  }
  const std::string ns = s.ns.empty() ? config.value().namespace_ : s.ns;
  kube::Client client(config.value());
  kube::RequestOptions options;
  options.timeout = s.connection.request_timeout;
  reconciler::LiveObservation observed;
  if (const auto failed =
          reconciler::ObserveLive(client, ns, name, options, s.backends.facts, &observed)) {
    return Fail(failed->ToString());
  }
  const doctor::Diagnosis d = doctor::Diagnose(observed.View());
  if (s.output == "text") {
    PrintText(d, ns, name, observed.notes);
  } else {
    json out = doctor::ToJson(d);
    out["deployment"] = {{"namespace", ns}, {"name", name}};
    out["notes"] = observed.notes;
    if (const auto& found = observed.discovery) {
      out["schedulingApi"] = {{"version", found->api.version}, {"served", found->served}};
    }
    const std::string text = s.output == "json" ? out.dump(2) + "\n" : check::ToYaml(out);
    std::fputs(text.c_str(), stdout);
  }
  return d.scheduled ? runtime::kExitOk : kExitPending;
}

}  // namespace wasd::cmd
