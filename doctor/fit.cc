// The fit preview of doctor/diagnosis.h: PodRequests and PreviewFit.
#include <algorithm>
#include <map>
#include <string>

#include "doctor/diagnosis.h"
#include "objects/json_util.h"
#include "objects/quantity.h"

namespace wasd::doctor {

namespace {

using nlohmann::json;

// An lvalue null for `p == nullptr ? kNullJson : *p` (no copy of *p).
const nlohmann::json kNullJson;
using objects::AsString;
using objects::Member;
using objects::MemberPath;

using ResourceMap = std::map<std::string, std::int64_t>;

constexpr std::string_view kPods = "pods";
constexpr std::int64_t kUnstatedPods = std::int64_t{1000000} * 1000;

// A ResourceList ({"cpu": "500m", ...}) in milli-units; unparsable values
// are skipped (the API server would not have stored them).
ResourceMap ReadResources(const json* list) {
  ResourceMap out;
  if (list == nullptr || !list->is_object()) return out;
  for (const auto& [name, value] : list->items()) {
    std::optional<std::int64_t> milli;
    if (value.is_string()) {
      milli = objects::ParseQuantityMilli(value.get<std::string>());
    } else if (value.is_number_integer()) {
      milli = objects::ParseQuantityMilli(std::to_string(value.get<std::int64_t>()));
    }
    if (milli && *milli > 0) out[name] = *milli;
  }
  return out;
}

void AddSaturating(std::int64_t& into, std::int64_t v) {
  into = (into > INT64_MAX - v) ? INT64_MAX : into + v;
}

ResourceMap RequestMap(const json& pod_spec) {
  ResourceMap sum;
  if (const json* cs = Member(pod_spec, "containers"); cs != nullptr && cs->is_array()) {
    for (const json& c : *cs) {
      for (const auto& [name, v] : ReadResources(MemberPath(c, {"resources", "requests"}))) {
        AddSaturating(sum[name], v);
      }
    }
  }
  if (const json* cs = Member(pod_spec, "initContainers"); cs != nullptr && cs->is_array()) {
    for (const json& c : *cs) {
      for (const auto& [name, v] : ReadResources(MemberPath(c, {"resources", "requests"}))) {
        sum[name] = std::max(sum[name], v);
      }
    }
  }
  for (const auto& [name, v] : ReadResources(Member(pod_spec, "overhead"))) {
    AddSaturating(sum[name], v);
  }
  sum[std::string(kPods)] = 1000;
  return sum;
}

std::string Label(const json& node, std::string_view key) {
  const std::string* v = AsString(MemberPath(node, {"metadata", "labels", key}));
  return v == nullptr ? "" : *v;
}

bool HasLabel(const json& node, std::string_view key) {
  return AsString(MemberPath(node, {"metadata", "labels", key})) != nullptr;
}

std::string Str(const json& object, std::string_view key) {
  const std::string* v = AsString(Member(object, key));
  return v == nullptr ? "" : *v;
}

// Does `toleration` tolerate `taint` (kube's ToleratesTaint)?
bool Tolerates(const json& toleration, const json& taint) {
  const std::string effect = Str(toleration, "effect");
  if (!effect.empty() && effect != Str(taint, "effect")) return false;
  const std::string key = Str(toleration, "key");
  const std::string op = Str(toleration, "operator");
  if (key.empty()) return op == "Exists";  // empty key + Exists tolerates everything
  if (key != Str(taint, "key")) return false;
  if (op == "Exists") return true;
  return Str(toleration, "value") == Str(taint, "value");  // Equal (the default)
}

// May a member of `pod_spec` go to `node` (unschedulable, nodeSelector, taints)?
bool Usable(const json& node, const json& pod_spec) {
  if (const json* u = MemberPath(node, {"spec", "unschedulable"});
      u != nullptr && u->is_boolean()) {
    if (u->get<bool>()) return false;
  }
  if (const json* sel = Member(pod_spec, "nodeSelector"); sel != nullptr && sel->is_object()) {
    for (const auto& [key, value] : sel->items()) {
      if (!value.is_string() || !HasLabel(node, key) ||
          Label(node, key) != value.get<std::string>()) {
        return false;
      }
    }
  }
  const json* taints = MemberPath(node, {"spec", "taints"});
  if (taints == nullptr || !taints->is_array()) return true;
  const json* tolerations = Member(pod_spec, "tolerations");
  for (const json& taint : *taints) {
    const std::string effect = Str(taint, "effect");
    if (effect != "NoSchedule" && effect != "NoExecute") continue;
    bool tolerated = false;
    if (tolerations != nullptr && tolerations->is_array()) {
      for (const json& t : *tolerations) tolerated = tolerated || Tolerates(t, taint);
    }
    if (!tolerated) return false;
  }
  return true;
}

bool Terminal(const json& pod) {
  const std::string* phase = AsString(MemberPath(pod, {"status", "phase"}));
  return phase != nullptr && (*phase == "Succeeded" || *phase == "Failed");
}

struct NodeRoom {
  std::string domain;
  ResourceMap free;  // allocatable − requests of bound pods (may go negative)
};

std::int64_t MembersFitting(const ResourceMap& free, const ResourceMap& request) {
  std::int64_t n = INT64_MAX;
  for (const auto& [name, need] : request) {
    const auto it = free.find(name);
    const std::int64_t have = it == free.end() ? 0 : it->second;
    n = std::min(n, have <= 0 ? 0 : have / need);
  }
  return n == INT64_MAX ? 0 : n;
}

}  // namespace

std::vector<std::pair<std::string, std::int64_t>> PodRequests(const json& pod_spec) {
  const ResourceMap m = RequestMap(pod_spec);
  return {m.begin(), m.end()};
}

namespace {

// The free room (allocatable less the requests of bound, non-terminal pods)
// of each node, by name, that the members may use and that lies in the
// topology (key `topology_key`, domain `only_domain` when set).
std::map<std::string, NodeRoom> RoomsOf(const json& pod_spec, std::string_view topology_key,
                                        std::string_view only_domain, const ObjectRefs& nodes,
                                        const ObjectRefs& bound_pods) {
  std::map<std::string, NodeRoom> rooms;  // by node name
  for (const json* node_p : nodes) {
    const json& node = *node_p;
    const std::string* name_p = AsString(MemberPath(node, {"metadata", "name"}));
    const std::string name = name_p == nullptr ? "" : *name_p;
    if (name.empty() || !Usable(node, pod_spec)) continue;
    if (!topology_key.empty() && !HasLabel(node, topology_key)) continue;
    if (!only_domain.empty() && Label(node, topology_key) != only_domain) continue;
    NodeRoom room;
    room.domain = topology_key.empty() ? "" : Label(node, topology_key);
    room.free = ReadResources(MemberPath(node, {"status", "allocatable"}));
    // A node that does not state its pod capacity (kubelets always do) is
    // not limited by it here.
    room.free.try_emplace(std::string(kPods), kUnstatedPods);
    rooms.emplace(name, std::move(room));
  }
  for (const json* pod_p : bound_pods) {
    const json& pod = *pod_p;
    const std::string* node = AsString(MemberPath(pod, {"spec", "nodeName"}));
    if (node == nullptr || Terminal(pod)) continue;
    const auto it = rooms.find(*node);
    if (it == rooms.end()) continue;
    const json* spec = Member(pod, "spec");
    for (const auto& [name, v] : RequestMap(spec == nullptr ? kNullJson : *spec)) {
      it->second.free[name] -= v;
    }
  }
  return rooms;
}

}  // namespace

FitPreview PreviewFit(const json& pod_spec, std::int64_t needed, std::string_view topology_key,
                      const std::vector<json>& nodes, const std::vector<json>& bound_pods,
                      std::string_view only_domain) {
  ObjectRefs node_refs;
  node_refs.reserve(nodes.size());
  for (const json& n : nodes) node_refs.push_back(&n);
  ObjectRefs pod_refs;
  pod_refs.reserve(bound_pods.size());
  for (const json& p : bound_pods) pod_refs.push_back(&p);
  return PreviewFit(pod_spec, needed, topology_key, node_refs, pod_refs, only_domain);
}

FitPreview PreviewFit(const json& pod_spec, std::int64_t needed, std::string_view topology_key,
                      const ObjectRefs& nodes, const ObjectRefs& bound_pods,
                      std::string_view only_domain) {
  FitPreview fit;
  if (topology_key.empty()) only_domain = {};
  fit.only_domain = std::string(only_domain);
  fit.topology_key = std::string(topology_key);
  fit.needed = needed;
  const ResourceMap request = RequestMap(pod_spec);
  fit.requests.assign(request.begin(), request.end());
  if (needed <= 0 || nodes.empty()) return fit;
  fit.computed = true;

  const std::map<std::string, NodeRoom> rooms =
      RoomsOf(pod_spec, topology_key, only_domain, nodes, bound_pods);

  std::map<std::string, DomainFit> domains;
  std::map<std::string, ResourceMap> domain_free;
  for (const auto& [name, room] : rooms) {
    DomainFit& d = domains[room.domain];
    d.domain = room.domain;
    ++d.nodes;
    AddSaturating(d.room, MembersFitting(room.free, request));
    for (const auto& [res, v] : room.free) {
      if (v > 0) AddSaturating(domain_free[room.domain][res], v);
    }
  }
  for (auto& [name, d] : domains) fit.domains.push_back(d);
  std::stable_sort(fit.domains.begin(), fit.domains.end(),
                   [](const DomainFit& a, const DomainFit& b) { return a.room > b.room; });

  const std::string where = topology_key.empty() ? "the cluster"
                            : only_domain.empty()
                                ? "largest " + std::string(topology_key) + " (%)"
                                : std::string(topology_key) + " % (where the gang runs)";
  if (fit.domains.empty()) {
    fit.text =
        topology_key.empty()  ? "no node the members may use (nodeSelector, taints, unschedulable)"
        : only_domain.empty() ? "no node the members may use carries " + std::string(topology_key)
                              : "no node the members may use is in " + std::string(topology_key) +
                                    " " + std::string(only_domain) + " (where the gang runs)";
    for (const auto& [res, per] : request) {
      fit.short_by.emplace_back(res, per > INT64_MAX / needed ? INT64_MAX : per * needed);
    }
    return fit;
  }
  const DomainFit& best = fit.domains.front();
  fit.fits = best.room >= needed;
  const ResourceMap& free = domain_free[best.domain];
  for (const auto& [res, per] : request) {
    const std::int64_t want = per > INT64_MAX / needed ? INT64_MAX : per * needed;
    const auto it = free.find(res);
    const std::int64_t have = it == free.end() ? 0 : it->second;
    if (want > have) fit.short_by.emplace_back(res, want - have);
  }
  fit.text = where;
  if (const std::size_t at = fit.text.find('%'); at != std::string::npos) {
    fit.text.replace(at, 1, best.domain);
  }
  fit.text += " has room for " + std::to_string(std::min(best.room, needed)) + " of " +
              std::to_string(needed) + " members";
  if (!fit.short_by.empty()) {
    fit.text += "; short";
    bool first = true;
    for (const auto& [res, v] : fit.short_by) {
      fit.text += (first ? " " : ", ") + objects::FormatQuantityMilli(res, v) + " " + res;
      first = false;
    }
  } else if (!fit.fits) {
    fit.text += "; the free capacity is split across nodes";
  }
  return fit;
}

}  // namespace wasd::doctor
