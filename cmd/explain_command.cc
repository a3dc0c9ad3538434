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
// Exit codes: 0 the gang is scheduled, 3 pending, 1 an error (not found, no
// access, not opted in), 2 bad flags.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/yaml_output.h"
#include "cmd/api_error.h"
#include "cmd/commands.h"
#include "cmd/deployment_target.h"
#include "cmd/flags.h"
#include "doctor/diagnosis.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "objects/quantity.h"
#include "reconciler/scheduling_api.h"
#include "runtime/flags.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::cmd {
namespace {

using nlohmann::json;

// An lvalue null for `p == nullptr ? kNullJson : *p` (no copy of *p).
const nlohmann::json kNullJson;

constexpr int kExitPending = 3;
// Timeline lines printed in text; the JSON output has all of them.
constexpr std::size_t kMaxTimelineLines = 40;

std::string Selector(const json& deployment) {
  const json* labels = objects::MemberPath(deployment, {"spec", "selector", "matchLabels"});
  std::string out;
  if (labels == nullptr || !labels->is_object()) return out;
  for (const auto& [k, v] : labels->items()) {
    if (!v.is_string()) continue;
    out += (out.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  }
  return out;
}

struct Reader {
  kube::Client& client;
  kube::RequestOptions options;
  std::vector<std::string> notes;

  kube::ListOptions List(std::string label = {}, std::string field = {}) const {
    kube::ListOptions o;
    o.label_selector = std::move(label);
    o.field_selector = std::move(field);
    o.request = options;
    return o;
  }
};

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

  auto config = kube::LoadConfig(kube::SourcesFromEnvironment(s.kubeconfig));
  if (!config.ok()) {
    return Fail("cannot load Kubernetes client configuration: " + config.status().ToString());
  }
  const std::string ns = s.ns.empty() ? config.value().namespace_ : s.ns;
  kube::Client client(config.value());
  Reader r{client, {}, {}};
  r.options.timeout = s.timeout;

  auto dep = client.Get(kube::Deployments(), ns, name, r.options);
  if (!dep.ok()) {
    if (dep.status().not_found()) {
      return Fail("deployment \"" + name + "\" not found in namespace \"" + ns + "\"");
    }
    return Fail("reading deployment " + ns + "/" + name + ": " + Why(dep.status()));
  }
  doctor::GangInput in;
  in.deployment = std::move(dep.value());
  in.facts = s.backends.facts;
  if (!workloadbuilder::HasSchedulingCarrier(in.deployment)) {
    return Fail("deployment " + ns + "/" + name +
                " is not opted in to gang scheduling (no annotation wasd.io/scheduling, no "
                "spec.scheduling)");
  }
  const std::string dep_uid = objects::UidOf(in.deployment);
  const std::string selector = Selector(in.deployment);

  auto rss = client.List(kube::ReplicaSets(), ns, r.List(selector));
  if (!rss.ok()) return Fail("listing replicasets in " + ns + ": " + Why(rss.status()));
  std::vector<std::string> rs_uids;
  for (json& rs : rss.value().items) {
    if (objects::ControllerUid(rs) != dep_uid) continue;
    rs_uids.push_back(objects::UidOf(rs));
    in.replicasets.push_back(std::move(rs));
  }
  auto pods = client.List(kube::Pods(), ns, r.List(selector));
  if (!pods.ok()) return Fail("listing pods in " + ns + ": " + Why(pods.status()));
  for (json& p : pods.value().items) {
    const std::string owner = objects::ControllerUid(p);
    for (const std::string& uid : rs_uids) {
      if (owner == uid) {
        in.pods.push_back(std::move(p));
        break;
      }
    }
  }

  // The backend's group objects; a 404 on the collection = the API is not served.
  const json* labels =
      objects::MemberPath(in.deployment, {"spec", "template", "metadata", "labels"});
  const std::optional<workloadbuilder::Backend> backend =
      workloadbuilder::BackendOfLabels(labels == nullptr ? kNullJson : *labels);
  std::optional<reconciler::SchedulingDiscovery> discovered;
  if (backend == workloadbuilder::Backend::kNative) {
    // Which scheduling.k8s.io version serves Workloads and PodGroups (v1
    // preferred): the one the reconciler uses too.
    discovered = reconciler::DiscoverSchedulingApi(
        [&](std::string_view gv) { return client.GetGroupVersion(gv, r.options); });
    if (!discovered->ok()) {
      return Fail("discovering the scheduling.k8s.io versions: " + Why(discovered->error));
    }
    if (!discovered->api.served()) in.api_served = false;
    in.scheduling_api_version = discovered->api.served() ? discovered->api.GroupVersion() : "";
  }
  if (backend && in.api_served) {
    const workloadbuilder::BackendInfo& info = workloadbuilder::Info(*backend);
    const kube::Resource groups =
        discovered
            ? discovered->api.PodGroups()
            : kube::Resource(workloadbuilder::GroupVersion(*backend), std::string(info.resource));
    auto list = client.List(groups, ns, r.List());
    if (list.ok()) {
      in.group_objects = std::move(list.value().items);
    } else if (list.status().not_found()) {
      in.api_served = false;
    } else {
      return Fail("listing " + std::string(info.resource) + "." + std::string(info.api_group) +
                  " in " + ns + ": " + Why(list.status()));
    }
    if (info.has_workload && in.api_served) {
      const kube::Resource workloads = discovered->api.Workloads();
      const std::string wl = workloadbuilder::GenerateWorkloadName(name, dep_uid);
      auto w = client.Get(workloads, ns, wl, r.options);
      if (w.ok()) {
        in.workload = std::move(w.value());
      } else if (w.status().not_found()) {
        in.api_served = client.List(workloads, ns, r.List()).ok();
      } else {
        return Fail("reading workload " + ns + "/" + wl + ": " + Why(w.status()));
      }
    }
  }

  auto events = client.List(kube::Events(), ns, r.List("", "reason=FailedScheduling"));
  if (events.ok()) {
    in.events = std::move(events.value().items);
  } else {
    r.notes.push_back("no FailedScheduling Events: " + Why(events.status()));
  }
  auto nodes = client.List(kube::Resource("v1", "nodes", false), "", r.List());
  if (nodes.ok()) {
    in.nodes = std::move(nodes.value().items);
    auto bound =
        client.List(kube::Pods(), "",
                    r.List("", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"));
    if (bound.ok()) {
      in.bound_pods = std::move(bound.value().items);
    } else {
      in.nodes.clear();
      r.notes.push_back("no fit preview: listing pods on nodes: " + Why(bound.status()));
    }
  } else {
    r.notes.push_back("no fit preview: listing nodes: " + Why(nodes.status()));
  }

  const doctor::Diagnosis d = doctor::Diagnose(in);
  if (s.output == "text") {
    PrintText(d, ns, name, r.notes);
  } else {
    json out = doctor::ToJson(d);
    out["deployment"] = {{"namespace", ns}, {"name", name}};
    out["notes"] = r.notes;
    if (discovered) {
      out["schedulingApi"] = {{"version", discovered->api.version}, {"served", discovered->served}};
    }
    const std::string text = s.output == "json" ? out.dump(2) + "\n" : check::ToYaml(out);
    std::fputs(text.c_str(), stdout);
  }
  return d.scheduled ? runtime::kExitOk : kExitPending;
}

}  // namespace wasd::cmd
