#include "workloadbuilder/backend_capabilities.h"

#include <cstdint>
#include <string>

#include "objects/json_util.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"
#include "workloadbuilder/validate.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

constexpr Support kFull = Support::kFull;
constexpr Support kPartial = Support::kPartial;
constexpr Support kNone = Support::kNone;

// Row fields, also the names CheckBackendCapabilities looks up.
constexpr std::string_view kMinCountRow = "schedulingPolicy.gang.minCount";
constexpr std::string_view kBasicRow = "schedulingPolicy.basic";
constexpr std::string_view kTopologyRow = "schedulingConstraints.topology";
constexpr std::string_view kDisruptionRow = "disruptionMode";
constexpr std::string_view kClaimsRow = "resourceClaims";
constexpr std::string_view kPriorityRow = "priority (template priorityClassName)";
constexpr std::string_view kQueueRow = "backends.<backend>.queue";
constexpr std::string_view kMinResourcesRow = "backends.<backend>.minResources";
constexpr std::string_view kTimeoutRow = "backends.<backend>.scheduleTimeoutSeconds";

// Columns in kAllBackends order: native, volcano, kai, coscheduling.
// clang-format off
constexpr std::array<CapabilityRow, 9> kTable = {{
  {kMinCountRow, {{
    {kFull, "Workload template schedulingPolicy.gang.minCount (spec.replicas when unset)"},
    {kFull, "spec.minMember (spec.replicas when unset)"},
    {kFull, "spec.minMember (spec.replicas when unset; a scale-up raises it only as the new members become active)"},
    {kFull, "spec.minMember (spec.replicas when unset)"}}}},
  {kBasicRow, {{
    {kFull, "schedulingPolicy.basic"},
    {kPartial, "spec.minMember 1"},
    {kPartial, "spec.minMember 1"},
    {kPartial, "spec.minMember 1"}}}},
  {kTopologyRow, {{
    {kPartial, "copied; kube-scheduler needs the TopologyAwareWorkloadScheduling gate (alpha)"},
    {kPartial, "networkTopology {mode: hard, highest tier} for a key given a HyperNode tier "
               "in --volcano-topology-tiers; other keys denied"},
    {kPartial, "topologyConstraint {topology, requiredTopologyLevel: key} for a key the "
            "--kai-topology Topology lists (--kai-topology-levels); other keys denied"},
    {kNone, "the coscheduling PodGroup has no topology"}}}},
  {kDisruptionRow, {{
    {kFull, "copied (single or all)"},
    {kNone, "Volcano has no group disruption mode"},
    {kPartial, "all: only with gang.minCount unset (minMember follows spec.replicas and KAI "
               "evicts the gang below it); single (also when omitted): only with basic "
               "(minMember 1)"},
    {kNone, "coscheduling has no group disruption mode"}}}},
  {kClaimsRow, {{
    {kFull, "copied (DRAWorkloadResourceClaims)"},
    {kNone, "no group-shared claims (pod-level DRA only)"},
    {kNone, "no group-shared claims (pod-level DRA only)"},
    {kNone, "no group-shared claims"}}}},
  {kPriorityRow, {{
    {kFull, "priorityClassName (class must exist, value <= 1e9)"},
    {kFull, "spec.priorityClassName"},
    {kFull, "spec.priorityClassName"},
    {kPartial, "not in the PodGroup: each pod keeps its own priority (one template, so equal)"}}}},
  {kQueueRow, {{
    {kNone, "no queues"},
    {kFull, "spec.queue (default --volcano-queue, else Volcano's \"default\"); must exist"},
    {kFull, "spec.queue (default --kai-queue); must exist"},
    {kNone, "no queues"}}}},
  {kMinResourcesRow, {{
    {kNone, "no minimum resources"},
    {kFull, "spec.minResources (enqueue check)"},
    {kNone, "no minimum resources"},
    {kFull, "spec.minResources (PreFilter capacity check)"}}}},
  {kTimeoutRow, {{
    {kNone, "fixed (5 minutes)"},
    {kNone, "no per-group timeout"},
    {kNone, "no per-group timeout"},
    {kFull, "spec.scheduleTimeoutSeconds (Permit wait; default 60)"}}}},
}};
// clang-format on

std::size_t IndexOf(Backend backend) {
  for (std::size_t i = 0; i < kAllBackends.size(); ++i) {
    if (kAllBackends[i] == backend) return i;
  }
  return 0;
}

const CapabilityRow& Row(std::string_view field) {
  for (const CapabilityRow& row : kTable) {
    if (row.field == field) return row;
  }
  return kTable[0];
}

// `use backend "a" or "b"`: the backends that express the row, other than `except`.
std::string Alternatives(const CapabilityRow& row, Backend except) {
  std::string out;
  for (Backend b : kAllBackends) {
    if (b == except || CapabilityOf(row, b).support == kNone) continue;
    out += out.empty() ? "use backend \"" : " or \"";
    out += BackendName(b);
    out += '"';
  }
  return out;
}

std::string NotSupported(Backend backend) {
  return "not supported by backend \"" + std::string(BackendName(backend)) + "\"";
}

// "not supported by backend "X"[: why]; remove it or use backend ..."
FieldError Denied(const FieldPath& path, Backend backend, std::string_view row_field,
                  std::string_view why = {}) {
  std::string detail = NotSupported(backend);
  if (!why.empty()) detail += ": " + std::string(why);
  const std::string alternatives = Alternatives(Row(row_field), backend);
  detail += "; remove it";
  if (!alternatives.empty()) detail += " or " + alternatives;
  return Forbidden(path, std::move(detail)).For(RuleId::kK3);
}

void CheckTopology(Backend backend, const json& config, const FieldPath& path,
                   const ClusterFacts& facts, FieldErrorList& errors) {
  const json* topology = objects::MemberPath(config, {"schedulingConstraints", "topology"});
  if (topology == nullptr || !topology->is_array() || topology->empty()) return;
  const FieldPath topo_path = path.Child("schedulingConstraints").Child("topology");
  const std::string* key = objects::AsString(objects::Member((*topology)[0], "key"));
  const std::string shown = key != nullptr ? GoQuote(*key) : std::string("\"\"");
  switch (backend) {
    case Backend::kNative: return;
    case Backend::kVolcano:
      if (key != nullptr && facts.VolcanoTierFor(*key) != nullptr) return;
      errors.push_back(Denied(topo_path, backend, kTopologyRow,
                              "no HyperNode tier is configured for the node label " + shown +
                                  " (--volcano-topology-tiers)"));
      return;
    case Backend::kKai:
      if (key != nullptr && facts.KaiHasLevel(*key)) return;
      errors.push_back(Denied(topo_path, backend, kTopologyRow,
                              facts.kai_topology.empty()
                                  ? std::string("no KAI Topology is configured (--kai-topology)")
                                  : "the KAI Topology \"" + facts.kai_topology +
                                        "\" has no level " + shown + " (--kai-topology-levels)"));
      return;
    case Backend::kCoscheduling: errors.push_back(Denied(topo_path, backend, kTopologyRow)); return;
  }
}

void CheckDisruptionMode(Backend backend, const json& config, const FieldPath& path,
                         FieldErrorList& errors) {
  const json* mode = objects::Member(config, "disruptionMode");
  const FieldPath mode_path = path.Child("disruptionMode");
  if (mode == nullptr) {
    // KEP-6276: an omitted disruptionMode is `single`. On KAI that is the
    // same intent as a written `single` and gets the same verdict (a gang
    // is denied); only the way forward differs, as there is nothing to
    // remove.
    if (backend != Backend::kKai || !IsGang(config)) return;
    errors.push_back(
        Required(mode_path,
                 NotSupported(backend) +
                     ": an omitted disruptionMode means `single`, and with a gang KAI evicts "
                     "the whole gang when it falls below its minimum; set disruptionMode "
                     "{all: {}} with gang.minCount unset, or use backend \"native\"")
            .For(RuleId::kK3));
    return;
  }
  switch (backend) {
    case Backend::kNative: return;
    case Backend::kVolcano:
    case Backend::kCoscheduling:
      errors.push_back(Denied(mode_path, backend, kDisruptionRow));
      return;
    case Backend::kKai:
      if (objects::Member(*mode, "all") != nullptr) {
        if (IsGang(config) && !ExplicitMinCount(config)) return;
        errors.push_back(Denied(mode_path, backend, kDisruptionRow,
                                "`all` needs a gang without gang.minCount, so that the minimum "
                                "is spec.replicas and KAI evicts the whole gang below it"));
        return;
      }
      if (objects::Member(*mode, "single") != nullptr) {
        if (!IsGang(config)) return;
        errors.push_back(Denied(mode_path, backend, kDisruptionRow,
                                "`single` with a gang: KAI evicts the whole gang when it falls "
                                "below its minimum"));
      }
      return;
  }
}

// The knob rows, by knob name.
const CapabilityRow* KnobRow(std::string_view knob) {
  if (knob == "queue") return &Row(kQueueRow);
  if (knob == "minResources") return &Row(kMinResourcesRow);
  if (knob == "scheduleTimeoutSeconds") return &Row(kTimeoutRow);
  return nullptr;
}

void CheckResourceList(const json& list, const FieldPath& path, FieldErrorList& errors) {
  if (!list.is_object()) {
    errors.push_back(
        Invalid(path, list, "must be an object of resource name to quantity").For(RuleId::kK5));
    return;
  }
  for (const auto& [name, quantity] : list.items()) {
    const FieldPath item = path.Key(name);
    for (const std::string& m : IsQualifiedName(name)) {
      errors.push_back(Invalid(item, name, m).For(RuleId::kK5));
    }
    if (quantity.is_string()) {
      if (!IsQuantity(quantity.get_ref<const std::string&>())) {
        errors.push_back(
            Invalid(item, quantity, "must be a quantity such as 500m, 2, 1.5Gi (non-negative)")
                .For(RuleId::kK5));
      }
    } else if (quantity.is_number()) {
      if ((quantity.is_number_integer() && quantity.get<double>() < 0) ||
          (quantity.is_number_float() && !(quantity.get<double>() >= 0))) {
        errors.push_back(Invalid(item, quantity, "must be non-negative").For(RuleId::kK5));
      }
    } else {
      errors.push_back(
          Invalid(item, quantity, "must be a quantity (a string or a number)").For(RuleId::kK5));
    }
  }
}

void CheckKnob(Backend backend, std::string_view knob, const json& value, const FieldPath& path,
               FieldErrorList& errors) {
  if (knob == "queue") {
    if (!value.is_string()) {
      errors.push_back(Invalid(path, value, "must be a string").For(RuleId::kK5));
      return;
    }
    const std::string& q = value.get_ref<const std::string&>();
    if (q.empty()) {
      errors.push_back(Required(path, "the name of a " + std::string(BackendName(backend)) +
                                          " queue; omit the field for the default queue")
                           .For(RuleId::kK5));
      return;
    }
    for (const std::string& m : IsDNS1123Subdomain(q)) {
      errors.push_back(Invalid(path, q, m).For(RuleId::kK5));
    }
  } else if (knob == "minResources") {
    CheckResourceList(value, path, errors);
  } else if (knob == "scheduleTimeoutSeconds") {
    const std::optional<std::int64_t> n = objects::AsInt(&value);
    if (!n) {
      errors.push_back(Invalid(path, value, "must be an integer").For(RuleId::kK5));
    } else if (*n < 1 || *n > INT32_MAX) {
      errors.push_back(Invalid(path, *n, "must be between 1 and 2147483647").For(RuleId::kK5));
    }
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string_view SupportSymbol(Support s) {
  switch (s) {
    case Support::kFull: return "✔";
    case Support::kPartial: return "◐";
    case Support::kNone: return "✘";
  }
  return "?";
}

std::span<const CapabilityRow> CapabilityTable() { return kTable; }

const Capability& CapabilityOf(const CapabilityRow& row, Backend backend) {
  return row.by_backend[IndexOf(backend)];
}

FieldErrorList CheckBackendCapabilities(Backend backend, const json& config, const FieldPath& path,
                                        const ClusterFacts& facts) {
  FieldErrorList errors;
  if (!config.is_object()) return errors;
  CheckTopology(backend, config, path, facts, errors);
  CheckDisruptionMode(backend, config, path, errors);
  if (const json* claims = objects::Member(config, "resourceClaims");
      backend != Backend::kNative && claims != nullptr &&
      !(claims->is_array() && claims->empty())) {
    errors.push_back(Denied(path.Child("resourceClaims"), backend, kClaimsRow));
  }
  if (const json* backends = objects::Member(config, kBackendsMember);
      backends != nullptr && backends->is_object()) {
    for (const auto& [name, block] : backends->items()) {
      if (name == BackendName(backend)) continue;
      if (!ParseBackend(name)) continue;  // ValidateBackendKnobs reports it
      errors.push_back(Forbidden(path.Child(kBackendsMember).Child(name),
                                 "settings for backend \"" + name +
                                     "\", but this Deployment uses backend \"" +
                                     std::string(BackendName(backend)) +
                                     "\"; remove them (they would be ignored)")
                           .For(RuleId::kK3));
    }
  }
  return errors;
}

FieldErrorList ValidateBackendKnobs(const json& backends, const FieldPath& path) {
  FieldErrorList errors;
  if (!backends.is_object()) {
    errors.push_back(Invalid(path, backends, "must be an object").For(RuleId::kK5));
    return errors;
  }
  for (const auto& [name, block] : backends.items()) {
    const FieldPath block_path = path.Child(name);
    const std::optional<Backend> backend = ParseBackend(name);
    if (!backend || *backend == Backend::kNative) {
      errors.push_back(
          NotSupported(block_path, name, {"volcano", "kai", "coscheduling"}).For(RuleId::kK5));
      continue;
    }
    if (!block.is_object()) {
      errors.push_back(Invalid(block_path, block, "must be an object").For(RuleId::kK5));
      continue;
    }
    for (const auto& [knob, value] : block.items()) {
      const FieldPath knob_path = block_path.Child(knob);
      const CapabilityRow* row = KnobRow(knob);
      if (row == nullptr) {
        errors.push_back(Invalid(block_path, knob, "unknown field").For(RuleId::kK5));
        continue;
      }
      if (CapabilityOf(*row, *backend).support == kNone) {
        errors.push_back(Denied(knob_path, *backend, row->field));
        continue;
      }
      CheckKnob(*backend, knob, value, knob_path, errors);
    }
  }
  return errors;
}

bool IsQuantity(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '+') ++i;
  bool digits = false;
  while (i < s.size() && IsDigit(s[i])) ++i, digits = true;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, digits = true;
  }
  if (!digits) return false;
  const std::string_view suffix = s.substr(i);
  if (suffix.empty()) return true;
  for (std::string_view ok :
       {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"}) {
    if (suffix == ok) return true;
  }
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  std::size_t j = 1;
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  if (j == suffix.size()) return false;
  for (; j < suffix.size(); ++j) {
    if (!IsDigit(suffix[j])) return false;
  }
  return true;
}

}  // namespace wasd::workloadbuilder
