// The gang doctor's readers (see reading.h).
#include "doctor/reading.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/time.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "workloadbuilder/builder.h"

namespace wasd::doctor::internal {

using nlohmann::json;
using objects::AsInt;
using objects::AsString;
using objects::Member;
using objects::MemberPath;
using workloadbuilder::Backend;

const nlohmann::json kNullJson;

namespace {

constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
constexpr std::string_view kNativeScheduledCondition = "PodGroupInitiallyScheduled";

}  // namespace

std::string Str(const json* value) {
  const std::string* s = AsString(value);
  return s == nullptr ? "" : *s;
}

std::string Str(const json& root, std::initializer_list<std::string_view> path) {
  return Str(MemberPath(root, path));
}

namespace {

std::int64_t Revision(const json& rs) {
  const std::string text = Str(rs, {"metadata", "annotations", kRevisionAnnotation});
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > INT64_MAX / 10 - 9) return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

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
  if (c.bound_before_group > 0) {
    m += std::to_string(c.bound_before_group) + " bound before their group existed, ";
  }
  m += "minCount " + std::to_string(c.min_count);
  return m;
}

std::optional<std::int64_t> GroupMinCount(const json& group, Backend backend) {
  try {
    const json::json_pointer ptr(std::string(workloadbuilder::Info(backend).min_count_pointer));
    if (!group.contains(ptr)) return std::nullopt;
    return AsInt(&group.at(ptr));
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

namespace {

std::string ConditionText(const json& c) {
  std::string t = Str(Member(c, "type")) + "=" + Str(Member(c, "status"));
  const std::string reason = Str(Member(c, "reason"));
  const std::string message = Str(Member(c, "message"));
  if (!reason.empty()) t += " (" + reason + ")";
  if (!message.empty()) t += ": " + message;
  return t;
}

constexpr std::string_view kKaiQueueReasons[] = {"QueueDoesNotExist", "OverLimit",
                                                 "NonPreemptibleOverQuota"};

// A count of the status as "key N"; nothing when absent.
void AddCount(const json& st, std::string_view key, std::vector<std::string>* parts) {
  if (std::optional<std::int64_t> n = AsInt(Member(st, key))) {
    parts->push_back(std::string(key) + " " + std::to_string(*n));
  }
}

// Native PodGroups and Volcano's: phase (Volcano) and conditions.
void ReadConditionsStatus(const json& group, const json& st, const std::string& phase,
                          Backend backend, GroupStatus* g, std::vector<std::string>* parts) {
  if (backend == Backend::kVolcano) {
    for (std::string_view key : {"running", "succeeded", "failed"}) AddCount(st, key, parts);
    g->placed = phase == "Running";
    g->queue_blocked = phase == "Pending";
    if (g->queue_blocked) {
      // Volcano's enqueue action admits a group to Inqueue once its queue
      // is open and has room for spec.minResources; "default" when unset.
      std::string queue = Str(group, {"spec", "queue"});
      if (queue.empty()) queue = "default";
      g->queue_message = "the PodGroup is still Pending (not Inqueue) in Volcano queue " + queue;
    }
  }
  const json* conds = Member(st, "conditions");
  if (conds == nullptr || !conds->is_array()) return;
  for (const json& c : *conds) {
    if (!c.is_object()) continue;
    parts->push_back(ConditionText(c));
    const std::string type = Str(Member(c, "type"));
    const std::string cs = Str(Member(c, "status"));
    if (backend == Backend::kNative && type == kNativeScheduledCondition) {
      if (cs == "True") g->placed = true;
      if (cs == "False") g->unschedulable = Str(Member(c, "message"));
    }
    if (backend == Backend::kVolcano && type == "Unschedulable" && cs == "True") {
      g->unschedulable = Str(Member(c, "message"));
    }
  }
}

// KAI's PodGroups: counts and schedulingConditions[].reasons[].
void ReadKaiStatus(const json& st, GroupStatus* g, std::vector<std::string>* parts) {
  for (std::string_view key : {"pending", "running", "succeeded", "failed"}) {
    AddCount(st, key, parts);
  }
  const json* conds = Member(st, "schedulingConditions");
  if (conds == nullptr || !conds->is_array()) return;
  for (const json& c : *conds) {
    const json* reasons = Member(c, "reasons");
    if (reasons == nullptr || !reasons->is_array()) continue;
    for (const json& r : *reasons) {
      const std::string reason = Str(Member(r, "reason"));
      const std::string message = Str(Member(r, "message"));
      parts->push_back(Str(Member(c, "type")) + " " + Str(Member(c, "nodePool")) + ": " + reason +
                       (message.empty() ? "" : ": " + message));
      const bool queue = std::find(std::begin(kKaiQueueReasons), std::end(kKaiQueueReasons),
                                   reason) != std::end(kKaiQueueReasons);
      if (queue) {
        g->queue_blocked = true;
        g->queue_message = reason;
        if (!message.empty()) g->queue_message += ": " + message;
      } else {
        g->unschedulable = message.empty() ? reason : message;
      }
    }
  }
}

}  // namespace

GroupStatus ReadGroupStatus(const json& group, Backend backend) {
  GroupStatus g;
  const json* status = Member(group, "status");
  const json empty = json::object();
  const json& st = status == nullptr ? empty : *status;
  std::vector<std::string> parts;
  const std::string phase = Str(Member(st, "phase"));
  if (!phase.empty()) parts.push_back("phase " + phase);
  switch (backend) {
    case Backend::kNative:
    case Backend::kVolcano: ReadConditionsStatus(group, st, phase, backend, &g, &parts); break;
    case Backend::kKai: ReadKaiStatus(st, &g, &parts); break;
    case Backend::kCoscheduling:
      for (std::string_view key : {"running", "succeeded", "failed"}) AddCount(st, key, &parts);
      g.placed = phase == "Running";
      break;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) g.summary += (i == 0 ? "" : "; ") + parts[i];
  if (g.summary.empty()) g.summary = "no status yet";
  return g;
}

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

namespace {

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

}  // namespace

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

Members CountMembers(const GangView& in, const json* rs, Diagnosis* d) {
  Members m;
  if (rs == nullptr) return m;
  const std::string rs_uid = objects::UidOf(*rs);
  Counts& c = d->counts;
  for (const json* pod_p : in.pods) {
    const json& pod = *pod_p;
    if (objects::ControllerUid(pod) != rs_uid || objects::IsTerminating(pod)) continue;
    m.pods.push_back(&pod);
    m.uids.insert(objects::UidOf(pod));
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

std::int64_t CountBoundBeforeGroup(const std::vector<const json*>& members, const json* group) {
  std::optional<std::chrono::system_clock::time_point> group_created;
  if (group != nullptr) {
    group_created = base::ParseRfc3339(Str(*group, {"metadata", "creationTimestamp"}));
    // A group whose creation time does not read: nothing can be said.
    if (!group_created) return 0;
  }
  std::int64_t n = 0;
  for (const json* pod : members) {
    if (Str(*pod, {"spec", "nodeName"}).empty()) continue;
    if (!group_created) {
      ++n;
      continue;
    }
    std::string bound_at;
    const json* conds = MemberPath(*pod, {"status", "conditions"});
    for (std::size_t i = 0; conds != nullptr && conds->is_array() && i < conds->size(); ++i) {
      const json& c = (*conds)[i];
      if (Str(Member(c, "type")) == "PodScheduled" && Str(Member(c, "status")) == "True") {
        bound_at = Str(Member(c, "lastTransitionTime"));
      }
    }
    if (bound_at.empty()) bound_at = Str(*pod, {"metadata", "creationTimestamp"});
    const std::optional<std::chrono::system_clock::time_point> t = base::ParseRfc3339(bound_at);
    if (t && *t < *group_created) ++n;
  }
  return n;
}

}  // namespace wasd::doctor::internal
