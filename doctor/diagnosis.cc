#include "doctor/diagnosis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "doctor/quantity.h"
#include "planner/object_util.h"
#include "planner/plan.h"
#include "rules/usable_config.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_capabilities.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/json_util.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::doctor {

namespace {

using nlohmann::json;

// An lvalue null for `p == nullptr ? kNullJson : *p` (no copy of *p).
const nlohmann::json kNullJson;
using workloadbuilder::AsInt;
using workloadbuilder::AsString;
using workloadbuilder::Backend;
using workloadbuilder::Member;
using workloadbuilder::MemberPath;

constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
constexpr std::string_view kNativeScheduledCondition = "PodGroupInitiallyScheduled";

std::string Str(const json* value) {
  const std::string* s = AsString(value);
  return s == nullptr ? "" : *s;
}

std::string Str(const json& root, std::initializer_list<std::string_view> path) {
  return Str(MemberPath(root, path));
}

std::int64_t Revision(const json& rs) {
  const std::string text = Str(rs, {"metadata", "annotations", kRevisionAnnotation});
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > INT64_MAX / 10 - 9) return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

// The Deployment's current ReplicaSet: the highest revision, then the newest.
const json* CurrentReplicaSet(const ObjectRefs& replicasets) {
  const json* best = nullptr;
  for (const json* rs_p : replicasets) {
    const json& rs = *rs_p;
    if (best == nullptr) {
      best = &rs;
      continue;
    }
    const auto key = [](const json& r) {
      return std::make_tuple(Revision(r), Str(r, {"metadata", "creationTimestamp"}));
    };
    if (key(rs) > key(*best)) best = &rs;
  }
  return best;
}

std::string JoinCounts(const Counts& c) {
  std::string m = std::to_string(c.created) + "/" + std::to_string(c.replicas) + " created, " +
                  std::to_string(c.gated_wasd) + " gated by wasd, ";
  if (c.gated_other > 0) m += std::to_string(c.gated_other) + " gated by others, ";
  m += std::to_string(c.bound) + " bound, ";
  if (c.failed > 0) m += std::to_string(c.failed) + " failed, ";
  m += "minCount " + std::to_string(c.min_count);
  return m;
}

// The gang minimum the group object states, if it does.
std::optional<std::int64_t> GroupMinCount(const json& group, Backend backend) {
  try {
    const json::json_pointer ptr(std::string(workloadbuilder::Info(backend).min_count_pointer));
    if (!group.contains(ptr)) return std::nullopt;
    return AsInt(&group.at(ptr));
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::string ConditionText(const json& c) {
  std::string t = Str(Member(c, "type")) + "=" + Str(Member(c, "status"));
  const std::string reason = Str(Member(c, "reason"));
  const std::string message = Str(Member(c, "message"));
  if (!reason.empty()) t += " (" + reason + ")";
  if (!message.empty()) t += ": " + message;
  return t;
}

struct GroupStatus {
  std::string summary;
  bool placed = false;  // the backend says the gang was placed (once)
  bool queue_blocked = false;
  std::string unschedulable;  // the backend's "cannot place" message, "" when none
  std::string queue_message;
};

constexpr std::string_view kKaiQueueReasons[] = {"QueueDoesNotExist", "OverLimit",
                                                 "NonPreemptibleOverQuota"};

GroupStatus ReadGroupStatus(const json& group, Backend backend) {
  GroupStatus g;
  const json* status = Member(group, "status");
  const json empty = json::object();
  const json& st = status == nullptr ? empty : *status;
  std::vector<std::string> parts;
  const auto count = [&](std::string_view key) {
    if (std::optional<std::int64_t> n = AsInt(Member(st, key))) {
      parts.push_back(std::string(key) + " " + std::to_string(*n));
    }
  };
  const std::string phase = Str(Member(st, "phase"));
  if (!phase.empty()) parts.push_back("phase " + phase);
  switch (backend) {
    case Backend::kNative:
    case Backend::kVolcano: {
      if (backend == Backend::kVolcano) {
        count("running");
        count("succeeded");
        count("failed");
        g.placed = phase == "Running";
        g.queue_blocked = phase == "Pending";
        if (g.queue_blocked) {
          // Volcano's enqueue action admits a group to Inqueue once its queue
          // is open and has room for spec.minResources; "default" when unset.
          std::string queue = Str(group, {"spec", "queue"});
          if (queue.empty()) queue = "default";
          g.queue_message = "the PodGroup is still Pending (not Inqueue) in Volcano queue " + queue;
        }
      }
      const json* conds = Member(st, "conditions");
      if (conds != nullptr && conds->is_array()) {
        for (const json& c : *conds) {
          if (!c.is_object()) continue;
          parts.push_back(ConditionText(c));
          const std::string type = Str(Member(c, "type"));
          const std::string cs = Str(Member(c, "status"));
          if (backend == Backend::kNative && type == kNativeScheduledCondition) {
            if (cs == "True") g.placed = true;
            if (cs == "False") g.unschedulable = Str(Member(c, "message"));
          }
          if (backend == Backend::kVolcano && type == "Unschedulable" && cs == "True") {
            g.unschedulable = Str(Member(c, "message"));
          }
        }
      }
      break;
    }
    case Backend::kKai: {
      count("pending");
      count("running");
      count("succeeded");
      count("failed");
      const json* conds = Member(st, "schedulingConditions");
      if (conds != nullptr && conds->is_array()) {
        for (const json& c : *conds) {
          const json* reasons = Member(c, "reasons");
          if (reasons == nullptr || !reasons->is_array()) continue;
          for (const json& r : *reasons) {
            const std::string reason = Str(Member(r, "reason"));
            const std::string message = Str(Member(r, "message"));
            parts.push_back(Str(Member(c, "type")) + " " + Str(Member(c, "nodePool")) + ": " +
                            reason + (message.empty() ? "" : ": " + message));
            const bool queue = std::find(std::begin(kKaiQueueReasons), std::end(kKaiQueueReasons),
                                         reason) != std::end(kKaiQueueReasons);
            if (queue) {
              g.queue_blocked = true;
              g.queue_message = reason;
              if (!message.empty()) g.queue_message += ": " + message;
            } else {
              g.unschedulable = message.empty() ? reason : message;
            }
          }
        }
      }
      break;
    }
    case Backend::kCoscheduling:
      count("running");
      count("succeeded");
      count("failed");
      g.placed = phase == "Running";
      break;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) g.summary += (i == 0 ? "" : "; ") + parts[i];
  if (g.summary.empty()) g.summary = "no status yet";
  return g;
}

// "a, b": the object's metadata.finalizers; "" when none.
std::string Finalizers(const json& object) {
  std::string out;
  const json* finalizers = MemberPath(object, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->is_array()) return out;
  for (const json& f : *finalizers) {
    if (const std::string* name = AsString(&f)) out += (out.empty() ? "" : ", ") + *name;
  }
  return out;
}

std::string TopologyKey(const json& config) {
  const json* topo = MemberPath(config, {"schedulingConstraints", "topology"});
  if (topo == nullptr || !topo->is_array() || topo->empty()) return "";
  return Str(Member((*topo)[0], "key"));
}

std::string EventTime(const json& ev) {
  for (std::string_view k : {"lastTimestamp", "eventTime", "firstTimestamp"}) {
    std::string t = Str(Member(ev, k));
    if (!t.empty()) return t;
  }
  return Str(ev, {"metadata", "creationTimestamp"});
}

void AddTimeline(const json& pod, std::vector<TimelineEntry>* out) {
  const std::string name = Str(pod, {"metadata", "name"});
  const std::string created = Str(pod, {"metadata", "creationTimestamp"});
  out->push_back({created, name, "created"});
  const json* gates = MemberPath(pod, {"spec", "schedulingGates"});
  std::string gate_names;
  if (gates != nullptr && gates->is_array()) {
    for (const json& g : *gates)
      gate_names += (gate_names.empty() ? "" : ", ") + Str(Member(g, "name"));
  }
  const json* conds = MemberPath(pod, {"status", "conditions"});
  std::string scheduled_at;
  if (conds != nullptr && conds->is_array()) {
    for (const json& c : *conds) {
      if (Str(Member(c, "type")) != "PodScheduled") continue;
      if (Str(Member(c, "status")) == "True") scheduled_at = Str(Member(c, "lastTransitionTime"));
      if (Str(Member(c, "status")) == "False" && Str(Member(c, "reason")) == "Unschedulable") {
        out->push_back({Str(Member(c, "lastTransitionTime")), name, "unschedulable"});
      }
      if (Str(Member(c, "reason")) == "SchedulingGated" && !gate_names.empty()) {
        const std::string t = Str(Member(c, "lastTransitionTime"));
        out->push_back({t.empty() ? created : t, name, "gated (" + gate_names + ")"});
        gate_names.clear();
      }
    }
  }
  if (!gate_names.empty()) out->push_back({created, name, "gated (" + gate_names + ")"});
  const std::string node = Str(pod, {"spec", "nodeName"});
  if (!node.empty()) {
    out->push_back({scheduled_at.empty() ? Str(pod, {"status", "startTime"}) : scheduled_at, name,
                    "bound to " + node});
  }
  const std::string phase = Str(pod, {"status", "phase"});
  if (phase == "Running" || phase == "Failed") {
    const std::string start = Str(pod, {"status", "startTime"});
    out->push_back(
        {start.empty() ? scheduled_at : start, name, phase == "Running" ? "running" : "failed"});
  }
}

// The one topology domain the bound members run in; "" when none or several.
std::string DomainOfBound(const std::vector<const json*>& members, const ObjectRefs& nodes,
                          const std::string& key) {
  if (key.empty()) return "";
  std::map<std::string, std::string> domain_of;  // node name -> its domain
  for (const json* n_p : nodes) {
    const json& n = *n_p;
    domain_of.emplace(Str(n, {"metadata", "name"}),
                      Str(MemberPath(n, {"metadata", "labels", key})));
  }
  std::set<std::string> domains;
  for (const json* pod : members) {
    const auto it = domain_of.find(Str(*pod, {"spec", "nodeName"}));
    if (it != domain_of.end()) domains.insert(it->second);
  }
  return domains.size() == 1 ? *domains.begin() : "";
}

// Sets the verdict on `d` and moves it out: `return Finish(d, ...)`. (Taking
// `d` by reference keeps the message, built from `d`, evaluated before any move.)
Diagnosis Finish(Diagnosis& d, std::string_view reason, std::string message, std::string next) {
  d.reason = std::string(reason);
  d.scheduled = reason == kScheduled;
  d.message = std::move(message);
  d.next_step = std::move(next);
  return std::move(d);
}

// The current ReplicaSet's members (its pods not being deleted), counted into
// d.counts and their timeline into d.timeline. Done before any verdict, so
// that every reason, the early ones too, reports the members that exist.
struct Members {
  std::vector<const json*> pods;
  std::set<std::string> uids;
};

Members CountMembers(const GangView& in, const json* rs, Diagnosis* d) {
  Members m;
  if (rs == nullptr) return m;
  const std::string rs_uid = planner::UidOf(*rs);
  Counts& c = d->counts;
  for (const json* pod_p : in.pods) {
    const json& pod = *pod_p;
    if (planner::ControllerUid(pod) != rs_uid || planner::IsTerminating(pod)) continue;
    m.pods.push_back(&pod);
    m.uids.insert(planner::UidOf(pod));
    AddTimeline(pod, &d->timeline);
    ++c.created;
    const json* gates = MemberPath(pod, {"spec", "schedulingGates"});
    bool wasd_gate = false;
    bool other_gate = false;
    if (gates != nullptr && gates->is_array()) {
      for (const json& g : *gates) {
        (Str(Member(g, "name")) == workloadbuilder::kPodGroupGate ? wasd_gate : other_gate) = true;
      }
    }
    c.gated_wasd += wasd_gate ? 1 : 0;
    c.gated_other += other_gate ? 1 : 0;
    if (!Str(pod, {"spec", "nodeName"}).empty()) ++c.bound;
    const std::string phase = Str(pod, {"status", "phase"});
    c.running += phase == "Running" ? 1 : 0;
    c.failed += phase == "Failed" ? 1 : 0;
  }
  std::stable_sort(d->timeline.begin(), d->timeline.end(),
                   [](const TimelineEntry& a, const TimelineEntry& b) { return a.time < b.time; });
  return m;
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
    if (name == planner::kPodGroupProtectionFinalizer) {
      protection = true;
    } else if (!name.empty()) {
      others += (others.empty() ? "" : ", ") + name;
    }
  }
  std::int64_t gated = 0;  // members naming it that never ran (wasd's gate, no node)
  std::int64_t ran = 0;    // members naming it that are bound or lost wasd's gate
  for (const json* pod : members) {
    if (workloadbuilder::LinkedPodGroupName(*pod, backend) != d.group_name) continue;
    const bool held = planner::GateIndex(*pod, workloadbuilder::kPodGroupGate).has_value() &&
                      Str(*pod, {"spec", "nodeName"}).empty();
    ++(held ? gated : ran);
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
           " member(s) that are bound or no longer gated by wasd must finish or be deleted "
           "(wasd releases it only while just the members it keeps gated name it)";
  } else if (protection && gated > 0 && backend == Backend::kNative) {
    next = "wait: only members wasd keeps gated (they never ran) name it, so wasd removes its " +
           std::string(planner::kPodGroupProtectionFinalizer) +
           " finalizer (Event PodGroupReleased) and then creates its own; if it stays, pods "
           "outside this Deployment still name it (the reconciler's PodGroupTerminating Event "
           "names one): they must finish or be deleted";
  }
  return Finish(d, kPodGroupTerminating, std::move(message), std::move(next));
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

Diagnosis Diagnose(const GangView& in) {
  static const workloadbuilder::ClusterFacts kNoFacts;
  Diagnosis d;
  const json& dep = in.deployment != nullptr ? *in.deployment : kNullJson;
  const json& workload = in.workload != nullptr ? *in.workload : kNullJson;
  const workloadbuilder::SchedulingConfig sc = workloadbuilder::ReadSchedulingConfig(dep);
  d.counts.replicas = planner::ReplicasOf(dep);
  const json* rs = CurrentReplicaSet(in.replicasets);
  const Members found = CountMembers(in, rs, &d);
  const std::vector<const json*>& members = found.pods;
  const std::set<std::string>& member_uids = found.uids;
  if (!sc.present()) {
    return Finish(d, kInvalidSchedulingConfiguration,
                  "the Deployment does not opt in (no annotation wasd.io/scheduling, no "
                  "spec.scheduling)",
                  "add the scheduling configuration (see wasd check)");
  }
  const rules::ConfigVerdict verdict = rules::CheckSchedulingConfig(sc);
  if (!verdict.usable) {
    return Finish(d, kInvalidSchedulingConfiguration,
                  workloadbuilder::AggregateMessage(verdict.errors),
                  "fix the scheduling configuration (`wasd check -f FILE` shows every error)");
  }
  const json* tmpl_labels = MemberPath(dep, {"spec", "template", "metadata", "labels"});
  const std::optional<Backend> backend =
      workloadbuilder::BackendOfLabels(tmpl_labels == nullptr ? kNullJson : *tmpl_labels);
  if (!backend) {
    return Finish(d, kInvalidSchedulingConfiguration,
                  "spec.template.metadata.labels[wasd.io/backend]: Unsupported value: \"" +
                      Str(Member(*tmpl_labels, workloadbuilder::kBackendLabel)) +
                      "\": supported values: \"native\", \"volcano\", \"kai\", \"coscheduling\"",
                  "re-create the Deployment with a backend wasd knows");
  }
  const workloadbuilder::BackendInfo& info = workloadbuilder::Info(*backend);
  d.backend = std::string(info.name);
  const bool native = *backend == Backend::kNative;
  const std::string group_version = native && !in.scheduling_api_version.empty()
                                        ? std::string(in.scheduling_api_version)
                                        : workloadbuilder::GroupVersion(*backend);
  d.group_kind = std::string(info.kind) + " (" + group_version + ")";
  if (!in.api_served) {
    return Finish(d, kAPINotAvailable,
                  native ? "the API scheduling.k8s.io workloads and podgroups (neither v1 nor "
                           "v1beta1) of backend native is not served; wasd keeps the pods gated"
                         : "the API " + group_version + " " + std::string(info.resource) +
                               " of backend " + d.backend +
                               " is not served; wasd keeps the pods gated",
                  native ? "serve the scheduling.k8s.io Workload API (v1 on Kubernetes 1.38 and "
                           "later; v1beta1 on 1.37, with feature gate GenericWorkload) or choose "
                           "another backend with the annotation wasd.io/backend"
                         : "install " + d.backend +
                               " or choose another backend with the annotation wasd.io/backend");
  }
  // The admission check itself, so that the doctor and the webhook never
  // disagree on what a backend can express.
  if (const workloadbuilder::FieldErrorList unsupported = workloadbuilder::CheckBackendCapabilities(
          *backend, sc.config, sc.path, in.facts != nullptr ? *in.facts : kNoFacts);
      !unsupported.empty()) {
    return Finish(d, kUnsupportedProviderCapability,
                  "backend " + d.backend + " cannot express the scheduling configuration: " +
                      workloadbuilder::AggregateMessage(unsupported),
                  "change the scheduling configuration as the error says, or configure the "
                  "cluster facts it names (`wasd check --capabilities` shows what each backend "
                  "expresses)");
  }
  const bool gang = workloadbuilder::IsGang(sc.config);
  d.counts.min_count = gang ? workloadbuilder::ResolveMinCount(sc.config, d.counts.replicas) : 1;

  if (d.counts.replicas == 0) {
    return Finish(d, kScheduled, "scaled to 0: nothing to schedule", "none");
  }
  if (rs == nullptr) {
    return Finish(
        d, kWaitingForQuorum,
        "0/" + std::to_string(d.counts.replicas) + " created: the Deployment has no ReplicaSet yet",
        "check the Deployment's conditions and events (kubectl describe deployment)");
  }
  const std::string rs_name = planner::NameOf(*rs);
  const std::string rs_uid = planner::UidOf(*rs);
  d.replicaset = rs_name;
  d.group_name = workloadbuilder::PodGroupName(rs_name, rs_uid);

  // The group object (and the native Workload).
  const json* group = nullptr;
  for (const json* g : in.group_objects) {
    if (planner::NameOf(*g) == d.group_name) group = g;
  }
  if (info.has_workload && !workload.is_object()) {
    const std::string wl =
        workloadbuilder::GenerateWorkloadName(planner::NameOf(dep), planner::UidOf(dep));
    return Finish(d, kPodGroupMissing,
                  "Workload " + wl + " does not exist; " + JoinCounts(d.counts),
                  "check that the wasd reconciler is running and leading (its log says why it "
                  "did not create the Workload)");
  }
  if (info.has_workload && planner::ControllerUid(workload) != planner::UidOf(dep)) {
    const std::string owner = planner::ControllerKind(workload);
    return Finish(d, kForeignObject,
                  "Workload " + planner::NameOf(workload) + " is not controlled by Deployment " +
                      planner::NameOf(dep) + " (controller: " +
                      (owner.empty() ? std::string("none")
                                     : owner + " " + planner::ControllerName(workload)) +
                      "); wasd leaves it alone",
                  "delete the foreign Workload so that wasd can create its own, or move the "
                  "Deployment off wasd");
  }
  if (group == nullptr) {
    return Finish(d, kPodGroupMissing,
                  std::string(info.kind) + " " + d.group_name + " of ReplicaSet " + rs_name +
                      " does not exist; " + JoinCounts(d.counts),
                  "check that the wasd reconciler is running and leading (its log says why it "
                  "did not create the " +
                      std::string(info.kind) + ")");
  }
  // Its status, also when it is someone else's (what that owner made of it).
  const GroupStatus gs = ReadGroupStatus(*group, *backend);
  d.group_summary = gs.summary;
  if (planner::ControllerUid(*group) != rs_uid) {
    const std::string owner =
        planner::ControllerKind(*group).empty()
            ? std::string("none")
            : planner::ControllerKind(*group) + " " + planner::ControllerName(*group);
    if (planner::IsTerminating(*group)) {
      return ForeignTerminating(d, *group, members, *backend, rs_name, owner);
    }
    std::string message = std::string(info.kind) + " " + d.group_name +
                          " is not controlled by ReplicaSet " + rs_name + " (controller: " + owner +
                          "); wasd leaves it alone";
    std::string next = "delete the foreign " + std::string(info.kind) +
                       " so that wasd can create its own, or move the Deployment off wasd";
    return Finish(d, kForeignObject, std::move(message), std::move(next));
  }
  if (std::optional<std::int64_t> n = GroupMinCount(*group, *backend)) d.counts.min_count = *n;
  if (planner::IsTerminating(*group)) {
    return Finish(
        d, kPodGroupTerminating,
        std::string(info.kind) + " " + d.group_name + " is being deleted; " + JoinCounts(d.counts),
        "wait for its old pods to finish (the deletion waits for them); the "
        "reconciler then creates it again");
  }

  // The scheduler's newest word on the members. A pending member's
  // PodScheduled=False/Unschedulable condition is its current state (the
  // scheduler writes there what its FailedScheduling Event says), so the
  // conditions win over Events, which pile up and carry one-second times; the
  // newest (time, message) pair is taken, so equal times still give one answer.
  std::optional<std::pair<std::string, std::string>> said;
  const auto consider = [&said](std::string time, std::string message) {
    std::pair<std::string, std::string> key{std::move(time), std::move(message)};
    if (!said || key > *said) said = std::move(key);
  };
  for (const json* pod : members) {
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
    for (const json* ev_p : in.events) {
      const json& ev = *ev_p;
      if (Str(Member(ev, "reason")) != "FailedScheduling") continue;
      if (member_uids.count(Str(ev, {"involvedObject", "uid"})) == 0) continue;
      consider(EventTime(ev), Str(Member(ev, "message")));
    }
  }
  if (said) d.scheduler_said = said->second;
  if (d.scheduler_said.empty()) d.scheduler_said = gs.unschedulable;

  const Counts& c = d.counts;
  const bool placed = gs.placed || (c.bound >= c.min_count && c.bound > 0);
  const std::int64_t unbound = c.created - c.bound;
  const std::int64_t ungated_unbound =
      std::max<std::int64_t>(0, unbound - c.gated_wasd - c.gated_other);
  const std::int64_t needed =
      placed ? ungated_unbound : std::max<std::int64_t>(0, c.min_count - c.bound);
  if (needed > 0 && !in.nodes.empty() && unbound > 0) {
    const json* spec = MemberPath(*rs, {"spec", "template", "spec"});
    const std::string key = TopologyKey(sc.config);
    d.fit = PreviewFit(spec == nullptr ? json::object() : *spec, needed, key, in.nodes,
                       in.bound_pods, placed ? DomainOfBound(members, in.nodes, key) : "");
  }
  const std::string counts = JoinCounts(c);

  if (!placed && c.created < c.min_count) {
    return Finish(d, kWaitingForQuorum, counts,
                  "the ReplicaSet has created fewer pods than minCount: kubectl describe "
                  "replicaset " +
                      rs_name + " shows why (quota, admission, pod creation errors)");
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
  if (unbound == 0) {
    return Finish(d, kScheduled, counts, "none");
  }
  if (gs.queue_blocked && !placed) {
    return Finish(d, kQueueBlocked, counts + "; " + gs.queue_message,
                  "the backend's queue holds the gang: check the queue exists and has quota");
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

nlohmann::json ToJson(const Diagnosis& d) {
  json counts = {{"replicas", d.counts.replicas},         {"minCount", d.counts.min_count},
                 {"created", d.counts.created},           {"gatedByWasd", d.counts.gated_wasd},
                 {"gatedByOthers", d.counts.gated_other}, {"bound", d.counts.bound},
                 {"running", d.counts.running},           {"failed", d.counts.failed}};
  json fit = json::object();
  if (d.fit.computed) {
    json requests = json::object();
    for (const auto& [name, v] : d.fit.requests) requests[name] = FormatQuantityMilli(name, v);
    json short_by = json::object();
    for (const auto& [name, v] : d.fit.short_by) short_by[name] = FormatQuantityMilli(name, v);
    json domains = json::array();
    for (const DomainFit& dom : d.fit.domains) {
      domains.push_back({{"domain", dom.domain}, {"nodes", dom.nodes}, {"room", dom.room}});
    }
    fit = {{"topologyKey", d.fit.topology_key},
           {"needed", d.fit.needed},
           {"requests", requests},
           {"domains", domains},
           {"short", short_by},
           {"fits", d.fit.fits},
           {"summary", d.fit.text}};
  }
  json timeline = json::array();
  for (const TimelineEntry& e : d.timeline) {
    timeline.push_back({{"time", e.time}, {"pod", e.pod}, {"event", e.what}});
  }
  return {{"status", d.scheduled ? "True" : "False"},
          {"reason", d.reason},
          {"message", d.message},
          {"nextStep", d.next_step},
          {"backend", d.backend},
          {"replicaSet", d.replicaset},
          {"group", {{"name", d.group_name}, {"kind", d.group_kind}, {"summary", d.group_summary}}},
          {"schedulerMessage", d.scheduler_said},
          {"counts", counts},
          {"fit", fit},
          {"timeline", timeline}};
}

}  // namespace wasd::doctor
