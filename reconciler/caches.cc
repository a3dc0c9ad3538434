#include "reconciler/caches.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string_view>

#include "base/time.h"
#include "objects/json_util.h"
#include "reconciler/api.h"
#include "reconciler/projections.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::reconciler {

using objects::ControllerKind;
using objects::ControllerName;
using objects::ControllerUid;
using objects::FindOwnerRef;
using objects::GateIndex;
using objects::IsTerminating;
using objects::Key;
using objects::NameOf;
using objects::NamespaceOf;
using objects::Object;
using objects::OwnerRefAt;
using objects::StripHashSuffix;
using objects::UidOf;
using planner::PlanInput;

using nlohmann::json;

namespace {

const std::string kManagedSelector = std::string(workloadbuilder::kManagedLabel) + "=true";
// Its complement: no marker label, or one with another value.
std::string UnmanagedSelector() { return std::string(workloadbuilder::kManagedLabel) + "!=true"; }

std::unique_ptr<kube::Informer> MakeInformer(kube::Client& client, kube::Resource resource,
                                             const std::string& selector,
                                             std::chrono::milliseconds resync,
                                             std::shared_ptr<const base::JsonProjection> projection,
                                             bool quiet_status_updates = false) {
  kube::InformerOptions o;
  o.quiet_status_updates = quiet_status_updates;
  o.resource = std::move(resource);
  o.label_selector = selector;
  o.resync = resync;
  o.projection = std::move(projection);
  // Encoded in the cache: ~0.5 KB per pod instead of ~4 KB decoded.
  o.compact = true;
  return std::make_unique<kube::Informer>(client, std::move(o));
}

// The Workload a PodGroup belongs to: its Workload ownerReference, else its
// spec.workloadRef.
std::string WorkloadNameOf(const json& pg) {
  const OwnerRefAt ref = FindOwnerRef(pg, "Workload");
  if (ref.ref != nullptr) {
    const std::string* n = objects::AsString(objects::Member(*ref.ref, "name"));
    if (n != nullptr) return *n;
  }
  const std::string* n =
      objects::AsString(objects::MemberPath(pg, {"spec", "workloadRef", "workloadName"}));
  return n != nullptr ? *n : std::string();
}

// A pod update the planner must see although the pod is not gated: a KAI
// member just bound to a node (a derived minMember grows only as members
// become active: planner/plan_podgroups.cc KaiMinMember), or a link that
// another actor rewrote (Warning MemberRelinked).
bool PodUpdateWakes(const json& before, const json& after) {
  if (workloadbuilder::LinkedPodGroupName(before) != workloadbuilder::LinkedPodGroupName(after)) {
    return true;
  }
  static const json kNoLabels;
  const json* labels = objects::MemberPath(after, {"metadata", "labels"});
  if (workloadbuilder::BackendOfLabels(labels != nullptr ? *labels : kNoLabels) !=
      workloadbuilder::Backend::kKai) {
    return false;
  }
  const auto node = [](const json& pod) {
    const std::string* n = objects::AsString(objects::MemberPath(pod, {"spec", "nodeName"}));
    return n != nullptr && !n->empty();
  };
  return !node(before) && node(after);
}

}  // namespace

namespace {

// Objects `a` and `b` have the same members with equal values, those named
// in `skip` aside.
bool EqualExcept(const json& a, const json& b, std::initializer_list<std::string_view> skip) {
  const auto skipped = [&skip](const std::string& key) {
    return std::find(skip.begin(), skip.end(), key) != skip.end();
  };
  std::size_t compared = 0;
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (skipped(it.key())) continue;
    const auto other = b.find(it.key());
    if (other == b.end() || *other != it.value()) return false;
    ++compared;
  }
  std::size_t in_b = 0;
  for (auto it = b.begin(); it != b.end(); ++it) in_b += skipped(it.key()) ? 0 : 1;
  return compared == in_b;
}

}  // namespace

bool OnlyStatusMoved(const json& before, const json& after) {
  const json* m1 = objects::Member(before, "metadata");
  const json* m2 = objects::Member(after, "metadata");
  if (!before.is_object() || !after.is_object() || m1 == nullptr || m2 == nullptr ||
      !m1->is_object() || !m2->is_object()) {
    return false;
  }
  // A resync (or a relist) delivers the object unchanged: not a status write.
  const std::string* rv1 = objects::AsString(objects::Member(*m1, "resourceVersion"));
  const std::string* rv2 = objects::AsString(objects::Member(*m2, "resourceVersion"));
  if (rv1 == nullptr || rv2 == nullptr || *rv1 == *rv2) return false;
  return EqualExcept(before, after, {"status", "metadata"}) &&
         EqualExcept(*m1, *m2, {"resourceVersion"});
}

Caches::Caches(kube::Client& client, std::chrono::milliseconds resync, RecentWrites& recent,
               std::function<void(const std::string&)> enqueue,
               const std::vector<workloadbuilder::Backend>& backends)
    : client_(client), recent_(recent), enqueue_(std::move(enqueue)) {
  // Each cache keeps only what its readers read (reconciler/projections.cc).
  // A Deployment's status moves with every rollout step and every gang
  // doctor condition; only the rest brings a reconcile, so a status-only
  // update is not even decoded for the handler (quiet_status_updates). The
  // handler's OnlyStatusMoved check stays for what the informer delivers
  // anyway (a collision of its digest).
  deployments_ = MakeInformer(client_, kube::Deployments(), kManagedSelector, resync,
                              DeploymentProjection(), true);
  replicasets_ =
      MakeInformer(client_, kube::ReplicaSets(), kManagedSelector, {}, ReplicaSetProjection());
  pods_ = MakeInformer(client_, kube::Pods(), kManagedSelector, {}, PodProjection());
  // Their resource is set by UseSchedulingApi, from discovery, before they start.
  workloads_ = MakeInformer(client_, Workloads(), "", {}, SchedulingObjectProjection());
  podgroups_ = MakeInformer(client_, PodGroups(), "", {}, SchedulingObjectProjection());

  auto key_of = [this](const kube::ObjectPtr& d) { enqueue_(Key(NamespaceOf(*d), NameOf(*d))); };
  deployments_->AddEventHandlers({key_of,
                                  [key_of](const kube::ObjectPtr& old, const kube::ObjectPtr& d) {
                                    if (old == nullptr || !OnlyStatusMoved(*old, *d)) key_of(d);
                                  },
                                  key_of});
  replicasets_->AddEventHandlers(
      {[this](const kube::ObjectPtr& o) { OnReplicaSet(o, false); },
       [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { OnReplicaSet(o, false); },
       [this](const kube::ObjectPtr& o) { OnReplicaSet(o, true); }});
  pods_->AddEventHandlers({[this](const kube::ObjectPtr& o) { OnPod(o, false); },
                           [this](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
                             OnPod(o, false, old != nullptr && PodUpdateWakes(*old, *o));
                           },
                           [this](const kube::ObjectPtr& o) { OnPod(o, true); }});
  workloads_->AddEventHandlers(
      {[this](const kube::ObjectPtr& o) { OnWorkload(o, false); },
       [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { OnWorkload(o, false); },
       [this](const kube::ObjectPtr& o) { OnWorkload(o, true); }});
  podgroups_->AddEventHandlers(
      {[this](const kube::ObjectPtr& o) { OnPodGroup(o, false); },
       [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { OnPodGroup(o, false); },
       [this](const kube::ObjectPtr& o) { OnPodGroup(o, true); }});
  for (const workloadbuilder::Backend b : backends) {
    if (b == workloadbuilder::Backend::kNative || backend_groups_.count(b) > 0) continue;
    // Volcano, KAI and coscheduling PodGroups: compared by spec, like ours;
    // only wasd's own (labelled where they are built, backend_compile.cc),
    // not every group of the cluster's batch workloads.
    auto& informer = backend_groups_[b] =
        MakeInformer(client_, GroupResource(b), kManagedSelector, {}, SchedulingObjectProjection());
    informer->AddEventHandlers(
        {[this](const kube::ObjectPtr& o) { OnBackendGroup(o, false); },
         [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { OnBackendGroup(o, false); },
         [this](const kube::ObjectPtr& o) { OnBackendGroup(o, true); }});
  }
}

Caches::~Caches() { Stop(); }

void Caches::EnableGangStatus() {
  if (nodes_ != nullptr) return;
  nodes_ = MakeInformer(client_, kube::Resource("v1", "nodes", false), "", {}, NodeProjection());
  kube::InformerOptions o;
  o.resource = kube::Pods();
  o.field_selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed";
  o.projection = BoundPodProjection();
  o.compact = true;
  bound_pods_ = std::make_unique<kube::Informer>(client_, std::move(o));
  // Every Deployment the webhook did not mark; a few hundred bytes each.
  unadmitted_ = MakeInformer(client_, kube::Deployments(), UnmanagedSelector(), {},
                             UnadmittedDeploymentProjection());
  // The informer delivers every change, a relist's included, as an add,
  // update or delete: the count follows the cache.
  auto carrier = [](const kube::ObjectPtr& d) -> std::int64_t {
    return d && workloadbuilder::HasSchedulingCarrier(*d) ? 1 : 0;
  };
  unadmitted_->AddEventHandlers(
      {.on_add = [this, carrier](const kube::ObjectPtr& d) { not_admitted_ += carrier(d); },
       .on_update =
           [this, carrier](const kube::ObjectPtr& old_d, const kube::ObjectPtr& new_d) {
             not_admitted_ += carrier(new_d) - carrier(old_d);
           },
       .on_delete = [this, carrier](const kube::ObjectPtr& d) { not_admitted_ -= carrier(d); }});
}

std::int64_t Caches::CountNotAdmitted() const {
  if (unadmitted_ == nullptr || !unadmitted_->HasSynced()) return 0;
  return not_admitted_.load();
}

void Caches::StartCore() {
  deployments_->Start();
  replicasets_->Start();
  pods_->Start();
  if (unadmitted_ != nullptr) unadmitted_->Start();
}

bool Caches::FitInputs(std::vector<Object>* nodes, std::vector<Object>* bound_pods) {
  if (nodes_ == nullptr) return false;
  if (!fit_started_.exchange(true)) {
    nodes_->Start();
    bound_pods_->Start();
  }
  // Both or neither: free capacity from Nodes without their pods overstates.
  if (!nodes_->HasSynced() || !bound_pods_->HasSynced()) return false;
  *nodes = nodes_->List();
  *bound_pods = bound_pods_->List();
  return true;
}

bool Caches::UseSchedulingApi(const SchedulingApi& api) {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (!scheduling_started_) {
    workloads_->Retarget(api.Workloads());
    podgroups_->Retarget(api.PodGroups());
    workloads_->Start();
    podgroups_->Start();
    scheduling_started_ = true;
    return false;
  }
  if (workloads_->resource().group_version == api.GroupVersion()) return false;
  // The same objects through another path: the caches are kept, and each
  // informer lists the new path (a relist: unchanged objects reach no handler).
  workloads_->Retarget(api.Workloads());
  podgroups_->Retarget(api.PodGroups());
  return true;
}

void Caches::StartGroups(workloadbuilder::Backend backend) {
  if (backend == workloadbuilder::Backend::kNative) return;  // UseSchedulingApi
  std::lock_guard<std::mutex> lock(start_mu_);
  const auto it = backend_groups_.find(backend);
  if (it != backend_groups_.end() && !backend_started_.contains(backend)) {
    it->second->Start();
    backend_started_.insert(backend);
  }
}

bool Caches::GroupsSynced(workloadbuilder::Backend backend) const {
  if (backend == workloadbuilder::Backend::kNative) return SchedulingSynced();
  const auto it = backend_groups_.find(backend);
  return it != backend_groups_.end() && it->second->HasSynced();
}

void Caches::Stop() {
  for (auto& [backend, informer] : backend_groups_) informer->Stop();
  for (auto* informer : {&unadmitted_, &bound_pods_, &nodes_, &podgroups_, &workloads_, &pods_,
                         &replicasets_, &deployments_}) {
    if (*informer) (*informer)->Stop();
  }
}

bool Caches::CoreSynced() const {
  return deployments_->HasSynced() && replicasets_->HasSynced() && pods_->HasSynced();
}

bool Caches::SchedulingSynced() const {
  return scheduling_started_ && workloads_->HasSynced() && podgroups_->HasSynced();
}

std::vector<std::string> Caches::DeploymentKeys() const {
  // The informer's keys are "ns/name", as objects::Key makes them.
  return deployments_->Keys();
}

void Caches::TrackGated(const std::string& key, const json& pod, bool gated_now) {
  std::lock_guard<std::mutex> lock(gated_mu_);
  if (!gated_now) {
    gated_.erase(key);
    return;
  }
  const std::string* created =
      objects::AsString(objects::MemberPath(pod, {"metadata", "creationTimestamp"}));
  const std::optional<std::int64_t> when =
      created ? base::ParseRfc3339Seconds(*created) : std::nullopt;
  gated_[key] = when.value_or(0);
}

GatedPods Caches::CountGatedPods() const {
  GatedPods out;
  std::lock_guard<std::mutex> lock(gated_mu_);
  out.count = gated_.size();
  for (const auto& [key, when] : gated_) {
    if (when != 0 && (!out.oldest_created_unix || when < *out.oldest_created_unix)) {
      out.oldest_created_unix = when;
    }
  }
  return out;
}

void Caches::EnqueueIfManaged(const std::string& ns, const std::string& deployment) {
  if (deployment.empty()) return;
  if (deployments_->Get(ns, deployment) != nullptr) enqueue_(Key(ns, deployment));
}

void Caches::OnReplicaSet(const kube::ObjectPtr& rs, bool deleted) {
  const std::string ns = NamespaceOf(*rs);
  const std::string key = Key(ns, NameOf(*rs));
  const std::string owner = ControllerKind(*rs) == "Deployment" ? ControllerName(*rs) : "";
  if (deleted) {
    rs_by_deployment_.Remove(key);
  } else {
    rs_by_deployment_.Set(key, NameOf(*rs), owner.empty() ? "" : Key(ns, owner));
  }
  EnqueueIfManaged(ns, owner);
}

void Caches::OnPod(const kube::ObjectPtr& pod, bool deleted, bool wake) {
  recent_.Observe(Kind::kPod, *pod, deleted);
  const std::string ns = NamespaceOf(*pod);
  const std::string key = Key(ns, NameOf(*pod));
  // Filed under the PodGroup the pod names; a gated pod that names none (its
  // schedulingGroup was dropped) under its ReplicaSet, whose PodGroup it needs.
  const bool gated = GateIndex(*pod, workloadbuilder::kPodGroupGate).has_value();
  TrackGated(key, *pod, !deleted && gated && !IsTerminating(*pod));
  std::string group_name = workloadbuilder::LinkedPodGroupName(*pod);
  const std::string rs_name = ControllerKind(*pod) == "ReplicaSet" ? ControllerName(*pod) : "";
  if (group_name.empty() && gated && !rs_name.empty()) {
    group_name = workloadbuilder::PodGroupName(rs_name, ControllerUid(*pod));
  }
  if (deleted || group_name.empty()) {
    pods_by_group_.Remove(key);
  } else {
    pods_by_group_.Set(key, NameOf(*pod), Key(ns, group_name));
  }
  // Also under its ReplicaSet: a member whose link another actor rewrote
  // (KAI's podgrouper before v0.15.0) is still the ReplicaSet's.
  if (deleted || rs_name.empty()) {
    pods_by_replicaset_.Remove(key);
  } else {
    pods_by_replicaset_.Set(key, NameOf(*pod), Key(ns, rs_name));
  }
  if (group_name.empty()) return;
  const std::string* group = &group_name;
  // Wake the Deployment when a gate may be lifted, or when a pod that kept
  // a PodGroup alive goes away.
  const std::string* phase = objects::AsString(objects::MemberPath(*pod, {"status", "phase"}));
  const bool finished = phase != nullptr && (*phase == "Succeeded" || *phase == "Failed");
  if (!deleted && !finished && !IsTerminating(*pod) && !gated && !wake) {
    return;
  }
  const kube::ObjectPtr rs = rs_name.empty() ? nullptr : replicasets_->Get(ns, rs_name);
  if (rs != nullptr && ControllerKind(*rs) == "Deployment") {
    EnqueueIfManaged(ns, ControllerName(*rs));
  } else if (!rs_name.empty()) {
    // Not cached (yet): `<deployment>-<template hash>` is the usual name.
    EnqueueIfManaged(ns, StripHashSuffix(rs_name));
  } else {
    // No ReplicaSet owner: the PodGroup's name leads to the Deployment,
    // `<deployment>-<template hash>-<uid hash>` (Q12) or, from the earlier
    // scheme, `<deployment>-<template hash>`.
    const std::string rs_guess = StripHashSuffix(*group);
    EnqueueIfManaged(ns, StripHashSuffix(rs_guess));
    EnqueueIfManaged(ns, rs_guess);
  }
}

void Caches::OnWorkload(const kube::ObjectPtr& workload, bool deleted) {
  recent_.Observe(Kind::kWorkload, *workload, deleted);
  if (deleted) deleted_.Record(NamespaceOf(*workload), NameOf(*workload));
  const std::string ns = NamespaceOf(*workload);
  const std::string key = Key(ns, NameOf(*workload));
  const std::string owner =
      ControllerKind(*workload) == "Deployment" ? ControllerName(*workload) : "";
  if (deleted || owner.empty()) {
    workloads_by_deployment_.Remove(key);
  } else {
    workloads_by_deployment_.Set(key, NameOf(*workload), Key(ns, owner));
  }
  EnqueueIfManaged(ns, owner.empty() ? StripHashSuffix(NameOf(*workload)) : owner);
}

void Caches::OnPodGroup(const kube::ObjectPtr& pg, bool deleted) {
  recent_.Observe(Kind::kPodGroup, *pg, deleted);
  if (deleted) deleted_.Record(NamespaceOf(*pg), NameOf(*pg));
  const std::string ns = NamespaceOf(*pg);
  const std::string key = Key(ns, NameOf(*pg));
  const std::string workload = WorkloadNameOf(*pg);
  if (deleted || workload.empty()) {
    podgroups_by_workload_.Remove(key);
  } else {
    podgroups_by_workload_.Set(key, NameOf(*pg), Key(ns, workload));
  }
  EnqueueGroupOwner(*pg);
}

void Caches::OnBackendGroup(const kube::ObjectPtr& pg, bool deleted) {
  recent_.Observe(Kind::kPodGroup, *pg, deleted);
  if (deleted) deleted_.Record(NamespaceOf(*pg), NameOf(*pg));
  // Filed under the Deployment its name leads to (`<deployment>-<template
  // hash>-<uid hash>`, Q12): a group whose ReplicaSet was deleted with
  // propagationPolicy Orphan is found by nothing else.
  const std::string ns = NamespaceOf(*pg);
  const std::string key = Key(ns, NameOf(*pg));
  if (deleted) {
    backend_groups_by_deployment_.Remove(key);
  } else {
    backend_groups_by_deployment_.Set(key, NameOf(*pg),
                                      Key(ns, StripHashSuffix(StripHashSuffix(NameOf(*pg)))));
  }
  EnqueueGroupOwner(*pg);
}

void Caches::EnqueueGroupOwner(const json& pg_object) {
  const json* pg = &pg_object;
  const std::string ns = NamespaceOf(*pg);
  std::string deployment;
  if (ControllerKind(*pg) == "ReplicaSet") {
    if (const kube::ObjectPtr rs = replicasets_->Get(ns, ControllerName(*pg)))
      deployment = ControllerName(*rs);
  }
  if (!deployment.empty()) {
    EnqueueIfManaged(ns, deployment);
    return;
  }
  // ReplicaSet not cached: `<deployment>-<template hash>-<uid hash>` (Q12),
  // or `<deployment>-<template hash>` for a PodGroup of the earlier scheme.
  const std::string rs_name = StripHashSuffix(NameOf(*pg));
  EnqueueIfManaged(ns, StripHashSuffix(rs_name));
  EnqueueIfManaged(ns, rs_name);
}

objects::Object Caches::Deployment(const std::string& ns, const std::string& name) const {
  return deployments_->Get(ns, name);
}

PlanInput Caches::Assemble(const std::string& ns, const std::string& name) const {
  PlanInput in;
  in.deployment = deployments_->Get(ns, name);
  if (in.deployment == nullptr) return in;
  const std::string deploy_key = Key(ns, name);
  const workloadbuilder::Backend backend =
      planner::BackendOf(*in.deployment).value_or(workloadbuilder::Backend::kNative);
  if (backend != workloadbuilder::Backend::kNative) {
    AssembleBackend(backend, ns, deploy_key, in);
    return in;
  }

  std::set<std::string> workload_names;
  workload_names.insert(workloadbuilder::GenerateWorkloadName(name, UidOf(*in.deployment)));
  for (const std::string& w : workloads_by_deployment_.Lookup(deploy_key)) workload_names.insert(w);
  for (const std::string& w : workload_names) {
    if (Object o =
            recent_.Resolve(Kind::kWorkload, ns, w, [&] { return workloads_->Get(ns, w); })) {
      in.workloads.push_back(std::move(o));
    }
  }

  std::set<std::string> pg_names;
  for (const std::string& rs_name : rs_by_deployment_.Lookup(deploy_key)) {
    kube::ObjectPtr rs = replicasets_->Get(ns, rs_name);
    if (rs == nullptr) continue;
    in.replicasets.push_back(rs);
    pg_names.insert(workloadbuilder::PodGroupName(rs_name, UidOf(*rs)));
    pg_names.insert(rs_name);  // a PodGroup of the earlier naming scheme
  }
  for (const std::string& w : workload_names) {
    for (const std::string& pg : podgroups_by_workload_.Lookup(Key(ns, w))) pg_names.insert(pg);
  }
  for (const std::string& pg : pg_names) {
    if (Object o =
            recent_.Resolve(Kind::kPodGroup, ns, pg, [&] { return podgroups_->Get(ns, pg); })) {
      in.podgroups.push_back(std::move(o));
    }
    for (const std::string& pod_name : pods_by_group_.Lookup(Key(ns, pg))) {
      if (Object pod =
              recent_.Resolve(Kind::kPod, ns, pod_name, [&] { return pods_->Get(ns, pod_name); })) {
        in.pods.push_back(std::move(pod));
      }
    }
  }
  return in;
}

void Caches::AssembleBackend(workloadbuilder::Backend backend, const std::string& ns,
                             const std::string& deploy_key, PlanInput& in) const {
  const auto informer = backend_groups_.find(backend);
  std::set<std::string> pg_names;
  for (const std::string& rs_name : rs_by_deployment_.Lookup(deploy_key)) {
    kube::ObjectPtr rs = replicasets_->Get(ns, rs_name);
    if (rs == nullptr) continue;
    in.replicasets.push_back(rs);
    pg_names.insert(workloadbuilder::PodGroupName(rs_name, UidOf(*rs)));
  }
  // Groups of ReplicaSets that are gone (orphaned ones among them): the
  // planner decides which are this Deployment's.
  for (const std::string& pg : backend_groups_by_deployment_.Lookup(deploy_key)) {
    pg_names.insert(pg);
  }
  std::set<std::string> pod_names;
  for (const std::string& pg : pg_names) {
    const auto cached = [&]() -> Object {
      return informer != backend_groups_.end() ? informer->second->Get(ns, pg) : nullptr;
    };
    if (Object o = recent_.Resolve(Kind::kPodGroup, ns, pg, cached)) {
      in.podgroups.push_back(std::move(o));
    }
    for (const std::string& pod_name : pods_by_group_.Lookup(Key(ns, pg))) {
      pod_names.insert(pod_name);
    }
  }
  // The ReplicaSets' own pods, whatever group they name now.
  for (const Object& rs : in.replicasets) {
    for (const std::string& pod_name : pods_by_replicaset_.Lookup(Key(ns, NameOf(*rs)))) {
      pod_names.insert(pod_name);
    }
  }
  for (const std::string& pod_name : pod_names) {
    if (Object pod =
            recent_.Resolve(Kind::kPod, ns, pod_name, [&] { return pods_->Get(ns, pod_name); })) {
      in.pods.push_back(std::move(pod));
    }
  }
}

}  // namespace wasd::reconciler
