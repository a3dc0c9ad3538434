#include "workloadbuilder/backend_compile.h"

#include <algorithm>
#include <optional>
#include <string>

#include "objects/json_util.h"
#include "workloadbuilder/names.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

BuildResult Error(std::string message) { return {nullptr, std::move(message)}; }

// backends.<name> of the config, or nullptr.
const json* BackendBlock(const json& config, Backend backend) {
  return objects::MemberPath(config, {kBackendsMember, BackendName(backend)});
}

// The first topology key of the config, or nullptr.
const std::string* TopologyKey(const json& config) {
  const json* topology = objects::MemberPath(config, {"schedulingConstraints", "topology"});
  if (topology == nullptr || !topology->is_array() || topology->empty()) return nullptr;
  return objects::AsString(objects::Member((*topology)[0], "key"));
}

void SetQueue(const json* block, const std::string& fallback, json& spec) {
  const std::string* queue =
      block != nullptr ? objects::AsString(objects::Member(*block, "queue")) : nullptr;
  if (queue != nullptr && !queue->empty()) {
    spec["queue"] = *queue;
  } else if (!fallback.empty()) {
    spec["queue"] = fallback;
  }
}

void CopyIfSet(const json* block, std::string_view key, json& spec) {
  if (block == nullptr) return;
  if (const json* v = objects::Member(*block, key)) spec[std::string(key)] = *v;
}

// [the ReplicaSet as controller, blocking its deletion]: the owners of a
// group object.
json ControllerRefs(const json& replicaset, const std::string& rs_name, const std::string& rs_uid) {
  const std::string* rs_api = objects::AsString(objects::Member(replicaset, "apiVersion"));
  return json::array({{{"apiVersion", rs_api != nullptr && !rs_api->empty() ? *rs_api : "apps/v1"},
                       {"kind", "ReplicaSet"},
                       {"name", rs_name},
                       {"uid", rs_uid},
                       {"controller", true},
                       {"blockOwnerDeletion", true}}});
}

}  // namespace

const VolcanoTier* ClusterFacts::VolcanoTierFor(std::string_view key) const {
  for (const auto& [k, tier] : volcano_tiers) {
    if (k == key) return &tier;
  }
  return nullptr;
}

bool ClusterFacts::KaiHasLevel(std::string_view key) const {
  if (kai_topology.empty()) return false;
  return std::find(kai_topology_levels.begin(), kai_topology_levels.end(), key) !=
         kai_topology_levels.end();
}

bool BackendSettings::Allows(Backend b) const {
  if (allowed.empty()) return b == backend;
  return std::find(allowed.begin(), allowed.end(), b) != allowed.end();
}

std::vector<std::string> BackendSettings::AllowedNames() const {
  std::vector<std::string> names;
  names.reserve(kAllBackends.size());
  for (Backend b : kAllBackends) {
    if (Allows(b)) names.emplace_back(BackendName(b));
  }
  return names;
}

Backend DeploymentBackend(const json& deployment, Backend fallback) {
  if (const std::string* name = objects::AsString(
          objects::MemberPath(deployment, {"metadata", "annotations", kBackendAnnotation}))) {
    if (const std::optional<Backend> b = ParseBackend(*name)) return *b;
  }
  if (const std::string* name = objects::AsString(objects::MemberPath(
          deployment, {"spec", "template", "metadata", "labels", kBackendLabel}))) {
    if (const std::optional<Backend> b = ParseBackend(*name)) return *b;
  }
  return fallback;
}

std::string_view SchedulerNameFor(Backend backend, const ClusterFacts& facts) {
  if (backend == Backend::kCoscheduling && !facts.coscheduling_scheduler_name.empty()) {
    return facts.coscheduling_scheduler_name;
  }
  return Info(backend).scheduler_name;
}

namespace {

// The backend's own spec fields of its group object (queue, priority,
// minResources, timeouts, topology) into `spec`; the reason when the
// configuration cannot be expressed under `facts`.
std::optional<std::string> CompileSpec(Backend backend, const json& deployment, const json& config,
                                       const ClusterFacts& facts, json& spec) {
  const json* block = BackendBlock(config, backend);
  const std::string* priority_class = objects::AsString(
      objects::MemberPath(deployment, {"spec", "template", "spec", "priorityClassName"}));
  const std::string* topology_key = TopologyKey(config);
  switch (backend) {
    case Backend::kVolcano:
      SetQueue(block, facts.volcano_queue, spec);
      if (priority_class != nullptr && !priority_class->empty()) {
        spec["priorityClassName"] = *priority_class;
      }
      CopyIfSet(block, "minResources", spec);
      if (topology_key != nullptr) {
        const VolcanoTier* tier = facts.VolcanoTierFor(*topology_key);
        if (tier == nullptr) {
          return ("no Volcano HyperNode tier is configured for topology key " + *topology_key +
                  " (--volcano-topology-tiers)");
        }
        json topology = {{"mode", "hard"}};
        if (tier->number) {
          topology["highestTierAllowed"] = *tier->number;
        } else {
          topology["highestTierName"] = tier->name;
        }
        spec["networkTopology"] = std::move(topology);
      }
      break;
    case Backend::kKai:
      SetQueue(block, facts.kai_queue, spec);
      if (priority_class != nullptr && !priority_class->empty()) {
        spec["priorityClassName"] = *priority_class;
      }
      if (topology_key != nullptr) {
        if (!facts.KaiHasLevel(*topology_key)) {
          return ("the KAI Topology does not list topology key " + *topology_key +
                  " (--kai-topology, --kai-topology-levels)");
        }
        spec["topologyConstraint"] = {{"topology", facts.kai_topology},
                                      {"requiredTopologyLevel", *topology_key}};
      }
      break;
    case Backend::kCoscheduling:
      CopyIfSet(block, "minResources", spec);
      CopyIfSet(block, "scheduleTimeoutSeconds", spec);
      if (topology_key != nullptr) {
        return ("the coscheduling backend cannot express a topology constraint");
      }
      break;
    case Backend::kNative: break;
  }
  return std::nullopt;
}

}  // namespace

BuildResult BuildBackendPodGroup(Backend backend, const json& deployment, const json& config,
                                 const json& replicaset, const ClusterFacts& facts) {
  if (backend == Backend::kNative) {
    return Error("the native backend compiles to a Workload and a PodGroup (BuildWorkload)");
  }
  const std::string* rs_name =
      objects::AsString(objects::MemberPath(replicaset, {"metadata", "name"}));
  const std::string* rs_uid =
      objects::AsString(objects::MemberPath(replicaset, {"metadata", "uid"}));
  if (rs_name == nullptr || rs_name->empty() || rs_uid == nullptr || rs_uid->empty()) {
    return Error("the ReplicaSet has no metadata.name or metadata.uid");
  }
  if (!config.is_object()) return Error("the scheduling configuration is not an object");

  json spec = json::object();
  const std::int64_t replicas =
      objects::AsInt(objects::MemberPath(deployment, {"spec", "replicas"})).value_or(1);
  spec["minMember"] = IsGang(config) ? ResolveMinCount(config, replicas) : 1;

  if (std::optional<std::string> error = CompileSpec(backend, deployment, config, facts, spec)) {
    return Error(*error);
  }

  json meta = json::object();
  meta["name"] = PodGroupName(*rs_name, *rs_uid);
  const std::string* ns =
      objects::AsString(objects::MemberPath(replicaset, {"metadata", "namespace"}));
  if (ns != nullptr && !ns->empty()) meta["namespace"] = *ns;
  meta["labels"] = {{std::string(kManagedLabel), "true"}};
  const std::string* deployment_uid =
      objects::AsString(objects::MemberPath(deployment, {"metadata", "uid"}));
  if (deployment_uid != nullptr && !deployment_uid->empty()) {
    meta["annotations"] = {{std::string(kDeploymentUidAnnotation), *deployment_uid}};
  }
  meta["ownerReferences"] = ControllerRefs(replicaset, *rs_name, *rs_uid);

  json group = json::object();
  group["apiVersion"] = GroupVersion(backend);
  group["kind"] = Info(backend).kind;
  group["metadata"] = std::move(meta);
  group["spec"] = std::move(spec);
  return {std::move(group), {}};
}

BuildResult BuildReleaseGroup(Backend backend, const json& deployment, const json& replicaset,
                              const ClusterFacts& facts, std::string_view api_version) {
  static const json kBasic = {{"schedulingPolicy", {{"basic", json::object()}}}};
  if (backend != Backend::kNative) {
    return BuildBackendPodGroup(backend, deployment, kBasic, replicaset, facts);
  }
  const std::string* rs_name =
      objects::AsString(objects::MemberPath(replicaset, {"metadata", "name"}));
  const std::string* rs_uid =
      objects::AsString(objects::MemberPath(replicaset, {"metadata", "uid"}));
  if (rs_name == nullptr || rs_name->empty() || rs_uid == nullptr || rs_uid->empty()) {
    return Error("the ReplicaSet has no metadata.name or metadata.uid");
  }
  json meta = {{"name", PodGroupName(*rs_name, *rs_uid)}};
  const std::string* ns =
      objects::AsString(objects::MemberPath(replicaset, {"metadata", "namespace"}));
  if (ns != nullptr && !ns->empty()) meta["namespace"] = *ns;
  meta["ownerReferences"] = ControllerRefs(replicaset, *rs_name, *rs_uid);
  return {{{"apiVersion", api_version},
           {"kind", "PodGroup"},
           {"metadata", std::move(meta)},
           {"spec", kBasic}},
          {}};
}

std::string LinkedPodGroupName(const json& pod, Backend backend) {
  const std::string* name = nullptr;
  switch (backend) {
    case Backend::kNative:
      name =
          objects::AsString(objects::MemberPath(pod, {"spec", "schedulingGroup", "podGroupName"}));
      break;
    case Backend::kVolcano:
      name = objects::AsString(
          objects::MemberPath(pod, {"metadata", "annotations", kVolcanoGroupAnnotation}));
      break;
    case Backend::kKai:
      name = objects::AsString(
          objects::MemberPath(pod, {"metadata", "annotations", kKaiGroupAnnotation}));
      break;
    case Backend::kCoscheduling:
      name = objects::AsString(
          objects::MemberPath(pod, {"metadata", "labels", kCoschedulingGroupLabel}));
      break;
  }
  return name != nullptr ? *name : std::string();
}

std::string LinkedPodGroupName(const json& pod) {
  static const json kNoLabels;
  const json* labels = objects::MemberPath(pod, {"metadata", "labels"});
  const std::optional<Backend> backend = BackendOfLabels(labels != nullptr ? *labels : kNoLabels);
  if (!backend) return {};
  return LinkedPodGroupName(pod, *backend);
}

}  // namespace wasd::workloadbuilder
