#include "migrate/plan.h"

#include <string>
#include <utility>

#include "objects/json_util.h"
#include "objects/object_util.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/config_text.h"
#include "workloadbuilder/scheduling_config.h"
#include "workloadbuilder/validate.h"

namespace wasd::migrate {
namespace {

using nlohmann::json;
using objects::AsString;
using objects::Member;
using objects::MemberPath;

constexpr std::string_view kWasdPrefix = "wasd.io/";
// Annotations the API server or kubectl keep on a Deployment that must not be
// copied to a new object: the rollout revision belongs to the old object, and
// kubectl's last-applied configuration still holds the annotation (a later
// `kubectl apply` of it would compute its diff against wasd's carrier).
constexpr std::string_view kDroppedAnnotations[] = {
    "deployment.kubernetes.io/revision", "kubectl.kubernetes.io/last-applied-configuration"};

bool IsWasdKey(std::string_view key) { return key.substr(0, kWasdPrefix.size()) == kWasdPrefix; }

bool IsDroppedAnnotation(std::string_view key) {
  if (IsWasdKey(key)) return true;
  for (std::string_view k : kDroppedAnnotations) {
    if (key == k) return true;
  }
  return false;
}

// A copy of the string map `map` (labels or annotations) without the keys
// `drop` names; null when nothing is left.
template <typename Pred>
json FilterMap(const json* map, Pred drop) {
  json out = json::object();
  if (map == nullptr || !map->is_object()) return json();
  for (const auto& [k, v] : map->items()) {
    if (!drop(k)) out[k] = v;
  }
  return out.empty() ? json() : out;
}

// The keys a label selector names (matchLabels and matchExpressions).
std::vector<std::string> SelectorKeys(const json& deployment) {
  std::vector<std::string> keys;
  const json* sel = MemberPath(deployment, {"spec", "selector"});
  if (sel == nullptr || !sel->is_object()) return keys;
  if (const json* ml = Member(*sel, "matchLabels"); ml != nullptr && ml->is_object()) {
    for (const auto& [k, v] : ml->items()) keys.push_back(k);
  }
  if (const json* me = Member(*sel, "matchExpressions"); me != nullptr && me->is_array()) {
    for (const json& e : *me) {
      if (const std::string* k = AsString(Member(e, "key"))) keys.push_back(*k);
    }
  }
  return keys;
}

// The backend wasd runs the Deployment with: the pod template's resolved
// label, else the Deployment's choice annotation, else native.
std::string BackendOf(const json& deployment) {
  if (const std::string* b =
          AsString(MemberPath(deployment, {"spec", "template", "metadata", "labels",
                                           std::string(workloadbuilder::kBackendLabel)}))) {
    return *b;
  }
  if (const std::string* b =
          AsString(MemberPath(deployment, {"metadata", "annotations",
                                           std::string(workloadbuilder::kBackendAnnotation)}))) {
    return *b;
  }
  return "native";
}

std::string Refused(const std::string& ns, const std::string& name, const std::string& why) {
  return "deployment " + ns + "/" + name + ": " + why;
}

// The new Deployment: the old one's spec with spec.scheduling, its own
// metadata without server-set members, wasd's labels and annotations.
json BuildManifest(const json& deployment, const std::string& new_name, const json& scheduling) {
  const json& meta = deployment["metadata"];
  json m = {{"name", new_name}};
  if (const std::string* ns = AsString(Member(meta, "namespace"))) m["namespace"] = *ns;
  if (json l = FilterMap(Member(meta, "labels"), IsWasdKey); !l.is_null()) m["labels"] = l;
  if (json a = FilterMap(Member(meta, "annotations"), IsDroppedAnnotation); !a.is_null()) {
    m["annotations"] = a;
  }
  if (const json* refs = Member(meta, "ownerReferences");
      refs != nullptr && refs->is_array() && !refs->empty()) {
    m["ownerReferences"] = *refs;  // none is a controller (refused before)
  }
  if (const json* fins = Member(meta, "finalizers"); fins != nullptr && fins->is_array()) {
    json keep = json::array();
    for (const json& f : *fins) {
      if (f != "foregroundDeletion" && f != "orphan") keep.push_back(f);
    }
    if (!keep.empty()) m["finalizers"] = keep;
  }

  json spec = deployment["spec"];
  spec.erase("scheduling");
  json& tmeta = spec["template"]["metadata"];
  if (!tmeta.is_object()) tmeta = json::object();
  tmeta.erase("creationTimestamp");
  for (const char* key : {"labels", "annotations"}) {
    if (tmeta.contains(key)) {
      json f = FilterMap(&tmeta[key], IsWasdKey);
      if (f.is_null()) {
        tmeta.erase(key);
      } else {
        tmeta[key] = std::move(f);
      }
    }
  }
  spec["scheduling"] = scheduling;
  return {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", m}, {"spec", spec}};
}

std::string Plural(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void AddSteps(Plan& p, bool gang, std::int64_t min_count) {
  const std::string old_ref = "deployment " + p.ns + "/" + p.name;
  const std::string new_ref = "deployment " + p.ns + "/" + p.new_name;
  const std::string probe =
      "Check that the API server keeps spec.scheduling: a server-side dry-run create of the "
      "manifest below must come back with the field (the WorkloadWithDeployment feature gate is "
      "on); otherwise stop, nothing changed.";
  const std::string gone =
      "Wait until the old ReplicaSets, pods and wasd's Workload and PodGroups of " + old_ref +
      " are gone (garbage collection through their ownerReferences); delete any of wasd's "
      "objects still left explicitly.";
  const std::string ready =
      "Wait until the in-tree controller has created the Workload and "
      "PodGroup of " +
      new_ref + " and its " + Plural(p.replicas, "replica") + " are Available.";
  if (p.kind == PlanKind::kInPlace) {
    p.steps = {probe,
               "Delete " + old_ref + " (uid " + p.uid +
                   ") with propagationPolicy Foreground: its ReplicaSets and pods go first. "
                   "Downtime starts.",
               gone, "Create " + new_ref + " with spec.scheduling (the manifest below).",
               ready + " Downtime ends."};
    p.downtime =
        "yes: from the delete until the new pods are Available, " + old_ref +
        " runs no pods (all " + Plural(p.replicas, "old pod") +
        " are removed before the new ones are created" +
        (gang ? "; the new gang starts once " + std::to_string(min_count) + " members fit" : "") +
        "). Use --plan side-by-side to avoid it.";
  } else {
    p.steps = {probe, "Create " + new_ref + " with spec.scheduling (the manifest below).", ready,
               "Delete " + old_ref + " (uid " + p.uid + ") with propagationPolicy Foreground.",
               gone};
    p.downtime =
        "none expected: the old pods serve until the new ones are Available, and both carry the "
        "same pod labels, so the same Service selects both while both run.";
    p.notes.push_back("Capacity: while both run the cluster needs room for " +
                      Plural(p.replicas, "more pod") +
                      (gang ? " (the new gang is placed only when all " +
                                  std::to_string(min_count) + " members fit at once)"
                            : "") +
                      ".");
    p.notes.push_back("Anything that names deployment/" + p.name +
                      " (a HorizontalPodAutoscaler, a CI pipeline, kubectl rollout commands) "
                      "must be pointed at deployment/" +
                      p.new_name + ".");
  }
  p.notes.push_back(
      "Update the Deployment's source (Git, Helm chart, kustomization) to this manifest: "
      "applying the old one again would put the annotation wasd.io/scheduling back next to "
      "spec.scheduling, which is denied.");
}

}  // namespace

std::string_view PlanKindName(PlanKind kind) {
  return kind == PlanKind::kInPlace ? "in-place" : "side-by-side";
}

std::optional<PlanKind> ParsePlanKind(std::string_view name) {
  if (name == "in-place") return PlanKind::kInPlace;
  if (name == "side-by-side") return PlanKind::kSideBySide;
  return std::nullopt;
}

Translation TranslateAnnotation(std::string_view text) {
  Translation t;
  workloadbuilder::TextOptions opts;
  const workloadbuilder::ParsedText parsed = workloadbuilder::ParseConfigText(text, opts);
  if (!parsed.ok()) {
    t.error = "the annotation wasd.io/scheduling does not parse: " + parsed.error;
    return t;
  }
  if (!parsed.value.is_object()) {
    t.error = "the annotation wasd.io/scheduling is not an object";
    return t;
  }
  json out = json::object();
  for (const auto& [k, v] : parsed.value.items()) {
    bool known = false;
    for (std::string_view m : kInTreeMembers) known = known || k == m;
    if (known) {
      if (!v.is_null()) out[k] = v;  // null equals absent
    } else if (k == workloadbuilder::kBackendsMember) {
      t.dropped.push_back(
          "the annotation's `backends` block (knobs of non-native backends) has no place in "
          "spec.scheduling and is left out.");
    } else {
      t.dropped.push_back("the annotation's member `" + k +
                          "` is not a field of spec.scheduling and is left out.");
    }
  }
  if (!out.contains("schedulingPolicy")) {
    t.error = "the annotation wasd.io/scheduling has no schedulingPolicy";
    return t;
  }
  t.scheduling = std::move(out);
  return t;
}

namespace {

// Why `deployment` (its annotation `annotation`, or null) cannot be handed
// over to the in-tree controller, or "" when it can be.
std::string WhyNotMigratable(const json& deployment, const std::string* annotation) {
  if (objects::IsTerminating(deployment)) return "is being deleted; nothing to migrate";
  const json* scheduling_field = MemberPath(deployment, {"spec", "scheduling"});
  if (scheduling_field != nullptr && !scheduling_field->is_null()) {
    return (
        "already carries spec.scheduling: the in-tree Deployment controller runs it, there is "
        "nothing to migrate" +
        std::string(annotation != nullptr
                        ? " (remove the annotation wasd.io/scheduling from it: both carriers on "
                          "one Deployment are denied)"
                        : ""));
  }
  if (annotation == nullptr) {
    return (
        "is not managed by wasd (no annotation wasd.io/scheduling); to give it to the in-tree "
        "controller, re-create it with spec.scheduling yourself");
  }
  const std::string backend = BackendOf(deployment);
  if (backend != "native") {
    return ("runs on wasd's " + backend +
            " backend; the in-tree controller creates only native scheduling.k8s.io "
            "Workloads and PodGroups (no Volcano, KAI or coscheduling groups), so it cannot "
            "take this Deployment over: keep it on wasd, or move it to wasd's native "
            "backend first");
  }
  if (const json* ctl = objects::ControllerRef(deployment)) {
    const std::string* kind = AsString(Member(*ctl, "kind"));
    const std::string* owner = AsString(Member(*ctl, "name"));
    return ("is controlled by " + (kind ? *kind : std::string("another object")) + " " +
            (owner ? *owner : std::string()) +
            ", which would re-create or fight a re-created Deployment; hand the intent "
            "over in that owner's template instead");
  }
  for (const std::string& key : SelectorKeys(deployment)) {
    if (IsWasdKey(key)) {
      return ("its spec.selector names the label " + key +
              "; the new pods must not carry wasd's labels, and a selector cannot change, "
              "so a migration would need a new selector: re-create it by hand");
    }
  }
  if (const json* sg = MemberPath(deployment, {"spec", "template", "spec", "schedulingGroup"});
      sg != nullptr && !sg->is_null()) {
    return (
        "its pod template sets spec.schedulingGroup, which spec.scheduling forbids; remove it "
        "first");
  }
  return "";
}

}  // namespace

Plan MakePlan(const json& deployment, const PlanOptions& options) {
  Plan p;
  p.kind = options.kind;
  p.name = objects::NameOf(deployment);
  p.ns = objects::NamespaceOf(deployment);
  p.uid = objects::UidOf(deployment);
  if (!deployment.is_object() || p.name.empty() || !deployment.contains("spec") ||
      !deployment["spec"].is_object()) {
    p.refusal = "not a Deployment with a name and a spec";
    return p;
  }
  auto refuse = [&](const std::string& why) {
    p.refusal = Refused(p.ns, p.name, why);
    return p;
  };
  const std::string* annotation =
      AsString(MemberPath(deployment, {"metadata", "annotations",
                                       std::string(workloadbuilder::kSchedulingAnnotation)}));
  if (std::string why = WhyNotMigratable(deployment, annotation); !why.empty()) return refuse(why);
  Translation t = TranslateAnnotation(*annotation);
  if (!t.error.empty()) return refuse(t.error + "; fix it first (wasd check shows the errors)");

  if (p.kind == PlanKind::kInPlace) {
    p.new_name = p.name;
  } else {
    p.new_name =
        options.new_name.empty() ? p.name + std::string(kSideBySideSuffix) : options.new_name;
    if (p.new_name == p.name) {
      return refuse("the side-by-side Deployment needs a name other than " + p.name +
                    " (--new-name); the in-place plan keeps the name");
    }
    if (auto errs = workloadbuilder::IsDNS1123Subdomain(p.new_name); !errs.empty()) {
      return refuse("the new name \"" + p.new_name +
                    "\" is not a valid Deployment name: " + errs.front());
    }
  }
  p.replicas = objects::ReplicasOf(deployment);
  const json* policy = Member(t.scheduling, "schedulingPolicy");
  const bool gang = policy != nullptr && policy->is_object() && policy->contains("gang");
  const std::int64_t min_count = objects::GangMinCount(t.scheduling).value_or(p.replicas);
  p.manifest = BuildManifest(deployment, p.new_name, t.scheduling);
  AddSteps(p, gang, min_count);
  for (std::string& d : t.dropped) p.notes.push_back("Left out: " + std::move(d));
  return p;
}

std::string PlanComment(const Plan& p) {
  std::string out;
  auto line = [&out](const std::string& s) {
    // A sentence that holds a newline stays one comment per line.
    std::size_t start = 0;
    while (true) {
      const std::size_t nl = s.find('\n', start);
      out +=
          "# " + s.substr(start, nl == std::string::npos ? std::string::npos : nl - start) + "\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  };
  line("wasd migrate: deployment " + p.ns + "/" + p.name +
       " from wasd (annotation wasd.io/scheduling) to the in-tree Deployment controller "
       "(spec.scheduling)");
  line("Plan: " + std::string(PlanKindName(p.kind)) +
       (p.kind == PlanKind::kSideBySide ? " (new Deployment " + p.new_name + ")" : ""));
  line("Downtime: " + p.downtime);
  line("Steps (wasd migrate --apply runs them, stopping at the first failure):");
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    line("  " + std::to_string(i + 1) + ". " + p.steps[i]);
  }
  for (const std::string& n : p.notes) line("Note: " + n);
  return out;
}

json PlanJson(const Plan& p) {
  return {{"namespace", p.ns},     {"name", p.name},        {"plan", PlanKindName(p.kind)},
          {"newName", p.new_name}, {"steps", p.steps},      {"downtime", p.downtime},
          {"notes", p.notes},      {"manifest", p.manifest}};
}

}  // namespace wasd::migrate
