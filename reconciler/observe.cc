#include "reconciler/observe.h"

#include <string_view>
#include <utility>

#include "kube/api_error.h"
#include "kube/resource.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::reconciler {
namespace {

using nlohmann::json;

doctor::ObjectRefs Refs(const std::vector<objects::Object>& list) {
  doctor::ObjectRefs borrowed;
  borrowed.reserve(list.size());
  for (const objects::Object& o : list) borrowed.push_back(o.get());
  return borrowed;
}

doctor::ObjectRefs Refs(const std::vector<json>& list) {
  doctor::ObjectRefs borrowed;
  borrowed.reserve(list.size());
  for (const json& o : list) borrowed.push_back(&o);
  return borrowed;
}

// "app=x,tier=y" from spec.selector.matchLabels ("" when absent).
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

// One live read of a namespace's objects; failures are ObserveFailures.
class LiveReader {
 public:
  LiveReader(kube::Client& client, std::string ns, const kube::RequestOptions& options)
      : client_(client), ns_(std::move(ns)), options_(options) {}

  kube::ListOptions List(std::string label = {}, std::string field = {}) const {
    kube::ListOptions o;
    o.label_selector = std::move(label);
    o.field_selector = std::move(field);
    o.request = options_;
    return o;
  }
  // The Deployment's ReplicaSets (by controller UID) and their pods.
  std::optional<ObserveFailure> Members(planner::PlanInput& in) {
    const std::string dep_uid = objects::UidOf(*in.deployment);
    const std::string selector = Selector(*in.deployment);
    auto rss = client_.List(kube::ReplicaSets(), ns_, List(selector));
    if (!rss.ok()) return ObserveFailure{"listing replicasets in " + ns_, rss.status()};
    std::vector<std::string> rs_uids;
    for (json& rs : rss.value().items) {
      if (objects::ControllerUid(rs) != dep_uid) continue;
      rs_uids.push_back(objects::UidOf(rs));
      in.replicasets.push_back(std::make_shared<const json>(std::move(rs)));
    }
    auto pods = client_.List(kube::Pods(), ns_, List(selector));
    if (!pods.ok()) return ObserveFailure{"listing pods in " + ns_, pods.status()};
    for (json& p : pods.value().items) {
      const std::string owner = objects::ControllerUid(p);
      for (const std::string& uid : rs_uids) {
        if (owner != uid) continue;
        in.pods.push_back(std::make_shared<const json>(std::move(p)));
        break;
      }
    }
    return std::nullopt;
  }

  // The backend's group objects, and the native Workload; a 404 on the
  // collection: the API is not served.
  std::optional<ObserveFailure> Groups(workloadbuilder::Backend backend, const std::string& name,
                                       LiveObservation& out) {
    planner::PlanInput& in = out.objects;
    const workloadbuilder::BackendInfo& info = workloadbuilder::Info(backend);
    const kube::Resource groups =
        out.discovery
            ? out.discovery->api.PodGroups()
            : kube::Resource(workloadbuilder::GroupVersion(backend), std::string(info.resource));
    auto list = client_.List(groups, ns_, List());
    if (list.ok()) {
      for (json& g : list.value().items)
        in.podgroups.push_back(std::make_shared<const json>(std::move(g)));
    } else if (list.status().not_found()) {
      out.api_served = false;
      return std::nullopt;
    } else {
      return ObserveFailure{"listing " + std::string(info.resource) + "." +
                                std::string(info.api_group) + " in " + ns_,
                            list.status()};
    }
    if (!info.has_workload || !out.discovery) return std::nullopt;
    const kube::Resource workloads = out.discovery->api.Workloads();
    const std::string wl =
        workloadbuilder::GenerateWorkloadName(name, objects::UidOf(*in.deployment));
    auto w = client_.Get(workloads, ns_, wl, options_);
    if (w.ok()) {
      in.workloads.push_back(std::make_shared<const json>(std::move(w.value())));
    } else if (w.status().not_found()) {
      out.api_served = client_.List(workloads, ns_, List()).ok();
    } else {
      return ObserveFailure{"reading workload " + ns_ + "/" + wl, w.status()};
    }
    return std::nullopt;
  }

  // What the diagnosis can do without: the FailedScheduling Events, and the
  // Nodes with the pods bound to them (the fit preview). Failures are notes.
  void Extras(LiveObservation& out) {
    auto events = client_.List(kube::Events(), ns_, List("", "reason=FailedScheduling"));
    if (events.ok()) {
      out.events = std::move(events.value().items);
    } else {
      out.notes.push_back("no FailedScheduling Events: " + kube::Why(events.status()));
    }
    auto nodes = client_.List(kube::Resource("v1", "nodes", false), "", List());
    if (!nodes.ok()) {
      out.notes.push_back("no fit preview: listing nodes: " + kube::Why(nodes.status()));
      return;
    }
    auto bound = client_.List(
        kube::Pods(), "", List("", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"));
    if (!bound.ok()) {
      out.notes.push_back("no fit preview: listing pods on nodes: " + kube::Why(bound.status()));
      return;
    }
    out.nodes = std::move(nodes.value().items);
    out.bound_pods = std::move(bound.value().items);
  }

 private:
  kube::Client& client_;
  std::string ns_;
  kube::RequestOptions options_;
};

}  // namespace

doctor::GangView GangViewOf(const planner::PlanInput& observed, bool api_served,
                            const workloadbuilder::ClusterFacts* facts) {
  doctor::GangView view;
  view.api_served = api_served;
  view.facts = facts;
  if (observed.deployment == nullptr) return view;
  const json& deployment = *observed.deployment;
  view.deployment = &deployment;
  view.replicasets = Refs(observed.replicasets);
  view.pods = Refs(observed.pods);
  view.group_objects = Refs(observed.podgroups);
  const std::string workload_name = workloadbuilder::GenerateWorkloadName(
      objects::NameOf(deployment), objects::UidOf(deployment));
  for (const objects::Object& w : observed.workloads) {
    if (objects::NameOf(*w) == workload_name) view.workload = w.get();
  }
  view.scheduling_api_version = observed.scheduling_api_version;
  return view;
}

doctor::GangView LiveObservation::View() const {
  doctor::GangView view = GangViewOf(objects, api_served, &objects.facts);
  view.events = Refs(events);
  view.nodes = Refs(nodes);
  view.bound_pods = Refs(bound_pods);
  return view;
}

std::string ObserveFailure::ToString() const {
  return cause.ok() ? what : what + ": " + kube::Why(cause);
}

std::optional<ObserveFailure> ObserveLive(kube::Client& client, const std::string& ns,
                                          const std::string& name,
                                          const kube::RequestOptions& options,
                                          const workloadbuilder::ClusterFacts& facts,
                                          LiveObservation* out) {
  planner::PlanInput& in = out->objects;
  in.facts = facts;
  in.scheduling_api_version.clear();  // the backend table's, unless discovery says
  auto dep = client.Get(kube::Deployments(), ns, name, options);
  if (!dep.ok()) {
    if (dep.status().not_found()) {
      return ObserveFailure{"deployment \"" + name + "\" not found in namespace \"" + ns + "\"",
                            {}};
    }
    return ObserveFailure{"reading deployment " + ns + "/" + name, dep.status()};
  }
  in.deployment = std::make_shared<const json>(std::move(dep.value()));
  if (!workloadbuilder::HasSchedulingCarrier(*in.deployment)) {
    return ObserveFailure{"deployment " + ns + "/" + name +
                              " is not opted in to gang scheduling (no annotation "
                              "wasd.io/scheduling, no spec.scheduling)",
                          {}};
  }
  LiveReader reader(client, ns, options);
  if (auto failed = reader.Members(in)) return failed;

  const std::optional<workloadbuilder::Backend> backend = planner::BackendOf(*in.deployment);
  if (backend == workloadbuilder::Backend::kNative) {
    // Which scheduling.k8s.io version serves Workloads and PodGroups (v1
    // preferred): the one the reconciler uses too.
    out->discovery = DiscoverSchedulingApi(
        [&](std::string_view gv) { return client.GetGroupVersion(gv, options); });
    if (!out->discovery->ok()) {
      return ObserveFailure{"discovering the scheduling.k8s.io versions", out->discovery->error};
    }
    out->api_served = out->discovery->api.served();
    if (out->api_served) in.scheduling_api_version = out->discovery->api.GroupVersion();
  }
  if (backend && out->api_served) {
    if (auto failed = reader.Groups(*backend, name, *out)) return failed;
  }
  reader.Extras(*out);
  return std::nullopt;
}

}  // namespace wasd::reconciler
