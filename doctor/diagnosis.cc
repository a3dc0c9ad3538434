#include "doctor/diagnosis.h"

#include <algorithm>
#include <optional>
#include <set>

#include "doctor/reading.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "objects/quantity.h"
#include "rules/usable_config.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_capabilities.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/pod_holds.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::doctor {

namespace {

using nlohmann::json;
using objects::Member;
using objects::MemberPath;
using workloadbuilder::Backend;
using namespace internal;  // NOLINT(google-build-using-namespace): the doctor's own readers

// Sets the verdict on `d` and moves it out: `return Finish(d, ...)`. (Taking
// `d` by reference keeps the message, built from `d`, evaluated before any move.)
Diagnosis Finish(Diagnosis& d, std::string_view reason, std::string message, std::string next) {
  d.reason = std::string(reason);
  d.scheduled = reason == kScheduled;
  d.message = std::move(message);
  d.next_step = std::move(next);
  return std::move(d);
}

// A group object that is not ours, being deleted: the step ForeignObject
// asks for is under way, so the reason is PodGroupTerminating and the next
// step says what it waits for. A native PodGroup that only
// podgroup-protection holds, named only by members wasd keeps gated (they
// never ran), is released by the reconciler itself (Q14 extended to foreign
// PodGroups; Event PodGroupReleased). `owner`: its controller, "none" or
// "Kind name".
Diagnosis ForeignTerminating(Diagnosis& d, const json& group,
                             const std::vector<const json*>& members, Backend backend,
                             const std::string& rs_name, const std::string& owner) {
  const std::string kind(workloadbuilder::Info(backend).kind);
  const std::string finalizers = Finalizers(group);
  bool protection = false;
  std::string others;
  const json* list = MemberPath(group, {"metadata", "finalizers"});
  for (std::size_t i = 0; list != nullptr && list->is_array() && i < list->size(); ++i) {
    const std::string name = Str(&(*list)[i]);
    if (name == objects::kPodGroupProtectionFinalizer) {
      protection = true;
    } else if (!name.empty()) {
      others += (others.empty() ? "" : ", ") + name;
    }
  }
  std::int64_t never_ran = 0;  // members naming it that wasd linked and that never ran
  std::int64_t ran = 0;        // members naming it that are bound or were scheduled
  for (const json* pod : members) {
    if (workloadbuilder::LinkedPodGroupName(*pod, backend) != d.group_name) continue;
    ++(workloadbuilder::WasdPodNeverRan(*pod) ? never_ran : ran);
  }
  std::string message = kind + " " + d.group_name + " is not controlled by ReplicaSet " + rs_name +
                        " (controller: " + owner + ") and is being deleted" +
                        (finalizers.empty() ? "" : ", held by finalizers " + finalizers) + "; " +
                        JoinCounts(d.counts);
  std::string next = "wait for it to go; wasd then creates its own";
  if (!others.empty()) {
    next = "its deletion waits for finalizers " + others +
           ", which wasd never removes: whoever added them must remove them";
  } else if (protection && ran > 0) {
    next = "its deletion waits for the pods that name it: " + std::to_string(ran) +
           " member(s) that are bound or were scheduled must finish or be deleted "
           "(wasd releases it only while just members that never ran name it)";
  } else if (protection && never_ran > 0 && backend == Backend::kNative) {
    next = "wait: only members that never ran name it, so wasd removes its " +
           std::string(objects::kPodGroupProtectionFinalizer) +
           " finalizer (Event PodGroupReleased) and then creates its own; if it stays, pods "
           "outside this Deployment still name it (the reconciler's PodGroupTerminating Event "
           "names one): they must finish or be deleted";
  }
  return Finish(d, kPodGroupTerminating, std::move(message), std::move(next));
}

// What the stages of a diagnosis share, filled as they go.
struct Gang {
  const GangView& in;
  const json& dep;
  const json& workload;
  workloadbuilder::SchedulingConfig sc;
  Backend backend = Backend::kNative;
  const workloadbuilder::BackendInfo* info = nullptr;
  const json* rs = nullptr;
  Members members;
  const json* group = nullptr;
  GroupStatus group_status;
};

// The members that wait for `group` without wasd's gate (held by their
// scheduler, or by nothing), as "; " + HoldWords; "" when every waiting
// member is gated (the counts already say so). From each pod's own state.
std::string WaitingWithoutGate(const Gang& g, const std::string& group) {
  std::vector<const json*> members;
  const std::string rs_uid = g.rs != nullptr ? objects::UidOf(*g.rs) : std::string();
  for (const json* pod : g.in.pods) {
    if (pod != nullptr && objects::ControllerUid(*pod) == rs_uid) members.push_back(pod);
  }
  workloadbuilder::HoldCounts c = workloadbuilder::CountHolds(members, g.backend);
  if (c.scheduler == 0 && c.unheld == 0) return "";
  c.gated = 0;
  return "; " + workloadbuilder::HoldWords(c, group);
}

using Verdict = std::optional<Diagnosis>;

// Stage 1: the configuration, the backend and its API. A verdict when the
// gang cannot go further.
Verdict CheckConfiguration(Gang& g, Diagnosis& d) {
  static const workloadbuilder::ClusterFacts kNoFacts;
  if (!g.sc.present()) {
    return Finish(d, kInvalidSchedulingConfiguration,
                  "the Deployment does not opt in (no annotation wasd.io/scheduling, no "
                  "spec.scheduling)",
                  "add the scheduling configuration (see wasd check)");
  }
  const rules::ConfigVerdict verdict = rules::CheckSchedulingConfig(g.sc);
  if (!verdict.usable) {
    return Finish(d, kInvalidSchedulingConfiguration,
                  workloadbuilder::AggregateMessage(verdict.errors),
                  "fix the scheduling configuration (`wasd check -f FILE` shows every error)");
  }
  const json* tmpl_labels = MemberPath(g.dep, {"spec", "template", "metadata", "labels"});
  const std::optional<Backend> backend =
      workloadbuilder::BackendOfLabels(tmpl_labels == nullptr ? kNullJson : *tmpl_labels);
  if (!backend) {
    return Finish(d, kInvalidSchedulingConfiguration,
                  "spec.template.metadata.labels[wasd.io/backend]: Unsupported value: \"" +
                      Str(Member(*tmpl_labels, workloadbuilder::kBackendLabel)) +
                      "\": supported values: \"native\", \"volcano\", \"kai\", \"coscheduling\"",
                  "re-create the Deployment with a backend wasd knows");
  }
  g.backend = *backend;
  g.info = &workloadbuilder::Info(*backend);
  d.backend = std::string(g.info->name);
  const bool native = *backend == Backend::kNative;
  const std::string group_version = native && !g.in.scheduling_api_version.empty()
                                        ? std::string(g.in.scheduling_api_version)
                                        : workloadbuilder::GroupVersion(*backend);
  d.group_kind = std::string(g.info->kind) + " (" + group_version + ")";
  if (!g.in.api_served) {
    // How the pods wait, from each pod's own state (a gate, its scheduler or
    // nothing), never from a flag.
    const std::string waiting =
        workloadbuilder::HoldWords(workloadbuilder::CountHolds(g.in.pods, *backend), "their group");
    return Finish(d, kAPINotAvailable,
                  native ? "the API scheduling.k8s.io workloads and podgroups (neither v1 nor "
                           "v1beta1) of backend native is not served: " +
                               waiting
                         : "the API " + group_version + " " + std::string(g.info->resource) +
                               " of backend " + d.backend + " is not served: " + waiting,
                  native ? "serve the scheduling.k8s.io Workload API (v1 on Kubernetes 1.38 and "
                           "later; v1beta1 on 1.37, with feature gate GenericWorkload) or choose "
                           "another backend with the annotation wasd.io/backend"
                         : "install " + d.backend +
                               " or choose another backend with the annotation wasd.io/backend");
  }
  // The admission check itself, so that the doctor and the webhook never
  // disagree on what a backend can express.
  if (const workloadbuilder::FieldErrorList unsupported = workloadbuilder::CheckBackendCapabilities(
          *backend, g.sc.config, g.sc.path, g.in.facts != nullptr ? *g.in.facts : kNoFacts);
      !unsupported.empty()) {
    return Finish(d, kUnsupportedProviderCapability,
                  "backend " + d.backend + " cannot express the scheduling configuration: " +
                      workloadbuilder::AggregateMessage(unsupported),
                  "change the scheduling configuration as the error says, or configure the "
                  "cluster facts it names (`wasd check --capabilities` shows what each backend "
                  "expresses)");
  }
  const bool gang = workloadbuilder::IsGang(g.sc.config);
  d.counts.min_count = gang ? workloadbuilder::ResolveMinCount(g.sc.config, d.counts.replicas) : 1;
  return std::nullopt;
}

// Stage 1b: did the webhook ever admit it? Its mutating webhook puts the
// marker label on every Deployment with the annotation; the reconciler and
// the pod webhook select on it. Without it nothing of wasd's acts, so looking
// for the group objects would blame the reconciler for a webhook that was
// never called.
Verdict CheckAdmitted(Gang& g, Diagnosis& d) {
  if (!workloadbuilder::HasSchedulingCarrier(g.dep))
    return std::nullopt;  // spec.scheduling: in-tree
  const std::string* marker = objects::AsString(
      MemberPath(g.dep, {"metadata", "labels", std::string(workloadbuilder::kManagedLabel)}));
  if (marker != nullptr && *marker == "true") return std::nullopt;
  const std::string name = objects::NameOf(g.dep);
  return Finish(
      d, kNotAdmitted,
      "Deployment " + name + " has the annotation wasd.io/scheduling but not the label " +
          std::string(workloadbuilder::kManagedLabel) +
          "=true that wasd's webhook adds: the webhook never admitted it (it was created or "
          "last changed while the webhook was not installed or not called, or its namespace "
          "is excluded from wasd's webhooks), so no reconciler manages it and its pods are "
          "scheduled one by one",
      "check that the webhook runs (kubectl get mutatingwebhookconfigurations -l "
      "app.kubernetes.io/name=wasd) and that the namespace is not excluded, then send the "
      "Deployment through it again with a change to its pod template, e.g. `kubectl rollout "
      "restart deployment/" +
          name + "` (the new ReplicaSet runs as a gang)");
}

// Stage 2: the ReplicaSet, the Workload and the group object, and whose they are.
Verdict CheckGroupObjects(Gang& g, Diagnosis& d) {
  const workloadbuilder::BackendInfo& info = *g.info;
  if (d.counts.replicas == 0)
    return Finish(d, kScheduled, "scaled to 0: nothing to schedule", "none");
  if (g.rs == nullptr) {
    return Finish(
        d, kWaitingForQuorum,
        "0/" + std::to_string(d.counts.replicas) + " created: the Deployment has no ReplicaSet yet",
        "check the Deployment's conditions and events (kubectl describe deployment)");
  }
  const std::string rs_name = objects::NameOf(*g.rs);
  const std::string rs_uid = objects::UidOf(*g.rs);
  d.replicaset = rs_name;
  d.group_name = workloadbuilder::PodGroupName(rs_name, rs_uid);
  for (const json* o : g.in.group_objects) {
    if (objects::NameOf(*o) == d.group_name) g.group = o;
  }
  if (info.has_workload && !g.workload.is_object()) {
    const std::string wl =
        workloadbuilder::GenerateWorkloadName(objects::NameOf(g.dep), objects::UidOf(g.dep));
    return Finish(d, kPodGroupMissing,
                  "Workload " + wl + " does not exist; " + JoinCounts(d.counts) +
                      WaitingWithoutGate(g, "PodGroup " + d.group_name),
                  "check that the wasd reconciler is running and leading (its log says why it "
                  "did not create the Workload)");
  }
  if (info.has_workload && objects::ControllerUid(g.workload) != objects::UidOf(g.dep)) {
    const std::string owner = objects::ControllerKind(g.workload);
    return Finish(d, kForeignObject,
                  "Workload " + objects::NameOf(g.workload) + " is not controlled by Deployment " +
                      objects::NameOf(g.dep) + " (controller: " +
                      (owner.empty() ? std::string("none")
                                     : owner + " " + objects::ControllerName(g.workload)) +
                      "); wasd leaves it alone",
                  "delete the foreign Workload so that wasd can create its own, or move the "
                  "Deployment off wasd");
  }
  if (g.group == nullptr) {
    return Finish(d, kPodGroupMissing,
                  std::string(info.kind) + " " + d.group_name + " of ReplicaSet " + rs_name +
                      " does not exist; " + JoinCounts(d.counts) +
                      WaitingWithoutGate(g, std::string(info.kind) + " " + d.group_name),
                  "check that the wasd reconciler is running and leading (its log says why it "
                  "did not create the " +
                      std::string(info.kind) + ")");
  }
  // Its status, also when it is someone else's (what that owner made of it).
  g.group_status = ReadGroupStatus(*g.group, g.backend);
  d.group_summary = g.group_status.summary;
  if (objects::ControllerUid(*g.group) != rs_uid) {
    const std::string owner =
        objects::ControllerKind(*g.group).empty()
            ? std::string("none")
            : objects::ControllerKind(*g.group) + " " + objects::ControllerName(*g.group);
    if (objects::IsTerminating(*g.group)) {
      return ForeignTerminating(d, *g.group, g.members.pods, g.backend, rs_name, owner);
    }
    return Finish(d, kForeignObject,
                  std::string(info.kind) + " " + d.group_name +
                      " is not controlled by ReplicaSet " + rs_name + " (controller: " + owner +
                      "); wasd leaves it alone",
                  "delete the foreign " + std::string(info.kind) +
                      " so that wasd can create its own, or move the Deployment off wasd");
  }
  if (std::optional<std::int64_t> n = GroupMinCount(*g.group, g.backend)) d.counts.min_count = *n;
  if (objects::IsTerminating(*g.group)) {
    return Finish(
        d, kPodGroupTerminating,
        std::string(info.kind) + " " + d.group_name + " is being deleted; " + JoinCounts(d.counts),
        "wait for its old pods to finish (the deletion waits for them); the "
        "reconciler then creates it again");
  }
  return std::nullopt;
}

// The scheduler's newest word on the members. A pending member's
// PodScheduled=False/Unschedulable condition is its current state (the
// scheduler writes there what its FailedScheduling Event says), so the
// conditions win over Events, which pile up and carry one-second times; the
// newest (time, message) pair is taken, so equal times still give one answer.
std::string SchedulerSaid(const Gang& g) {
  std::optional<std::pair<std::string, std::string>> said;
  const auto consider = [&said](std::string time, std::string message) {
    std::pair<std::string, std::string> key{std::move(time), std::move(message)};
    if (!said || key > *said) said = std::move(key);
  };
  for (const json* pod : g.members.pods) {
    const json* conds = MemberPath(*pod, {"status", "conditions"});
    if (conds == nullptr || !conds->is_array() || !Str(*pod, {"spec", "nodeName"}).empty()) {
      continue;
    }
    for (const json& c : *conds) {
      if (Str(Member(c, "type")) == "PodScheduled" && Str(Member(c, "status")) == "False" &&
          Str(Member(c, "reason")) == "Unschedulable") {
        consider(Str(Member(c, "lastTransitionTime")), Str(Member(c, "message")));
      }
    }
  }
  if (!said) {
    for (const json* ev_p : g.in.events) {
      const json& ev = *ev_p;
      if (Str(Member(ev, "reason")) != "FailedScheduling") continue;
      if (g.members.uids.count(Str(ev, {"involvedObject", "uid"})) == 0) continue;
      consider(EventTime(ev), Str(Member(ev, "message")));
    }
  }
  return said ? said->second : g.group_status.unschedulable;
}

// Stage 3: the members, the scheduler's word and the fit preview.
Diagnosis JudgeMembers(const Gang& g, Diagnosis& d) {
  const workloadbuilder::BackendInfo& info = *g.info;
  const GroupStatus& gs = g.group_status;
  d.scheduler_said = SchedulerSaid(g);
  const Counts& c = d.counts;
  const bool placed = gs.placed || (c.bound >= c.min_count && c.bound > 0);
  const std::int64_t unbound = c.created - c.bound;
  const std::int64_t ungated_unbound =
      std::max<std::int64_t>(0, unbound - c.gated_wasd - c.gated_other);
  const std::int64_t needed =
      placed ? ungated_unbound : std::max<std::int64_t>(0, c.min_count - c.bound);
  if (needed > 0 && !g.in.nodes.empty() && unbound > 0) {
    const json* spec = MemberPath(*g.rs, {"spec", "template", "spec"});
    const std::string key = TopologyKey(g.sc.config);
    d.fit =
        PreviewFit(spec == nullptr ? json::object() : *spec, needed, key, g.in.nodes,
                   g.in.bound_pods, placed ? DomainOfBound(g.members.pods, g.in.nodes, key) : "");
  }
  const std::string counts = JoinCounts(c);
  if (!placed && c.created < c.min_count) {
    return Finish(d, kWaitingForQuorum, counts,
                  "the ReplicaSet has created fewer pods than minCount: kubectl describe "
                  "replicaset " +
                      d.replicaset + " shows why (quota, admission, pod creation errors)");
  }
  if (!placed && c.created - c.gated_wasd < c.min_count) {
    return Finish(d, kWaitingForQuorum, counts,
                  "wasd lifts its gate once the " + std::string(info.kind) +
                      " exists: check that the wasd reconciler is running");
  }
  if (c.gated_other > 0) {
    return Finish(d, kGatedByOther, counts,
                  "another controller holds its scheduling gate on " +
                      std::to_string(c.gated_other) +
                      " members (Kueue's kueue.x-k8s.io/admission: the workload waits for quota "
                      "in its queue; kubectl get workloads.kueue.x-k8s.io)");
  }
  if (unbound == 0) return Finish(d, kScheduled, counts, "none");
  if (gs.queue_blocked && !placed) {
    return Finish(d, kQueueBlocked, counts + "; " + gs.queue_message,
                  "the backend's queue holds the gang: check the queue exists and has quota");
  }
  // The backend says the gang was placed, yet fewer than minCount members are
  // bound: the scheduler is binding it (a large gang's bindings take seconds
  // after its quorum is reached). Not a scale-up, unless the members left
  // cannot fit (a placed gang that lost members, say).
  if (gs.placed && c.bound < c.min_count && !(d.fit.computed && !d.fit.fits)) {
    return Finish(d, kWaitingForQuorum,
                  counts + "; the scheduler placed the gang and is binding its members",
                  "none while the members are being bound; if it lasts, kubectl get events "
                  "shows what the scheduler says of them");
  }
  std::string detail;
  if (!d.scheduler_said.empty()) detail += "; scheduler: " + d.scheduler_said;
  if (d.fit.computed) detail += "; " + d.fit.text;
  if (placed) {
    return Finish(d, kScaleUpPending,
                  counts + "; the gang was placed, " + std::to_string(ungated_unbound) +
                      " newer members are not" + detail,
                  "free or add capacity for the new members, or scale back to the placed size");
  }
  if (!d.scheduler_said.empty() || (d.fit.computed && !d.fit.fits)) {
    return Finish(d, kUnschedulable, counts + detail,
                  "free or add capacity where the fit preview says it is short, lower minCount, "
                  "or relax the pod template's nodeSelector/tolerations");
  }
  return Finish(d, kWaitingForQuorum, counts + "; waiting for the scheduler" + detail,
                "the scheduler has not placed the gang yet: check that " +
                    (info.scheduler_name.empty() ? std::string("kube-scheduler")
                                                 : std::string(info.scheduler_name)) +
                    " is running");
}

}  // namespace

GangView ViewOf(const GangInput& input) {
  GangView v;
  v.deployment = &input.deployment;
  const auto refs = [](const std::vector<json>& objects) {
    ObjectRefs out;
    out.reserve(objects.size());
    for (const json& o : objects) out.push_back(&o);
    return out;
  };
  v.replicasets = refs(input.replicasets);
  v.pods = refs(input.pods);
  v.group_objects = refs(input.group_objects);
  v.workload = input.workload.is_null() ? nullptr : &input.workload;
  v.events = refs(input.events);
  v.nodes = refs(input.nodes);
  v.bound_pods = refs(input.bound_pods);
  v.api_served = input.api_served;
  v.scheduling_api_version = input.scheduling_api_version;
  v.facts = &input.facts;
  return v;
}

Diagnosis Diagnose(const GangInput& in) { return Diagnose(ViewOf(in)); }

bool MayBeScheduled(const GangView& in) {
  const json* rs = CurrentReplicaSet(in.replicasets);
  if (rs == nullptr) return true;
  const std::string rs_uid = objects::UidOf(*rs);
  for (const json* pod : in.pods) {
    if (objects::ControllerUid(*pod) != rs_uid || objects::IsTerminating(*pod)) continue;
    if (Str(*pod, {"spec", "nodeName"}).empty()) return false;
  }
  return true;
}

Diagnosis Diagnose(const GangView& in) {
  Diagnosis d;
  Gang g{in,
         in.deployment != nullptr ? *in.deployment : kNullJson,
         in.workload != nullptr ? *in.workload : kNullJson,
         {},
         Backend::kNative,
         nullptr,
         nullptr,
         {},
         nullptr,
         {}};
  g.sc = workloadbuilder::ReadSchedulingConfig(g.dep);
  d.counts.replicas = objects::ReplicasOf(g.dep);
  g.rs = CurrentReplicaSet(in.replicasets);
  g.members = CountMembers(in, g.rs, &d);
  if (g.rs != nullptr) {
    const std::string group_name =
        workloadbuilder::PodGroupName(objects::NameOf(*g.rs), objects::UidOf(*g.rs));
    const json* group = nullptr;
    for (const json* o : in.group_objects) {
      if (objects::NameOf(*o) == group_name) group = o;
    }
    d.counts.bound_before_group = CountBoundBeforeGroup(g.members.pods, group);
  }
  if (Verdict v = CheckConfiguration(g, d)) return std::move(*v);
  if (Verdict v = CheckAdmitted(g, d)) return std::move(*v);
  if (Verdict v = CheckGroupObjects(g, d)) return std::move(*v);
  return JudgeMembers(g, d);
}

}  // namespace wasd::doctor
