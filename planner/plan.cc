// PlanDeployment: the Workload step here, the PodGroup and gate steps in
// plan_podgroups.cc (see plan.h for the rules).
#include "planner/plan.h"

#include <algorithm>
#include <string>

#include "objects/json_util.h"
#include "planner/plan_internal.h"
#include "rules/usable_config.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner {

using nlohmann::json;
using objects::AsString;
using objects::MemberPath;

namespace internal {

void AddEvent(Plan& plan, std::string_view type, std::string_view reason, std::string message) {
  plan.actions.push_back(Action::Event(type, reason, std::move(message)));
}

void AddRequeue(Plan& plan, std::chrono::milliseconds delay) {
  for (const Action& a : plan.actions) {
    if (a.kind == ActionKind::kRequeueAfter) return;
  }
  plan.actions.push_back(Action::RequeueAfter(delay));
}

std::vector<const json*> SortedByName(const std::vector<Object>& list) {
  std::vector<const json*> out;
  out.reserve(list.size());
  for (const Object& o : list) {
    if (o != nullptr && o->is_object()) out.push_back(o.get());
  }
  std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
    return objects::NameOf(*a) < objects::NameOf(*b);
  });
  return out;
}

}  // namespace internal

namespace {

using internal::AddEvent;

// Our Workload: the generated name AND controlled by the Deployment's UID.
// Another Workload the Deployment controls (anyone allowed to create
// Workloads may point a controller reference at it) is never ours: wasd
// would otherwise treat the PodGroups referencing it as its own.
const json* FindOurWorkload(const PlanInput& in, std::string_view deployment_uid,
                            std::string_view wanted_name) {
  for (const json* w : internal::SortedByName(in.workloads)) {
    if (objects::ControllerUid(*w) == deployment_uid && objects::NameOf(*w) == wanted_name)
      return w;
  }
  return nullptr;
}

const json* FindByName(const std::vector<Object>& list, std::string_view name) {
  for (const Object& o : list) {
    if (o != nullptr && objects::NameOf(*o) == name) return o.get();
  }
  return nullptr;
}

// Q10: the pod template's priorityClassName, when the class is known and low
// enough for a Workload template; otherwise a Warning Event says why it was
// left out.
workloadbuilder::BuildOptions PriorityOptions(const PlanInput& in, const json& deployment,
                                              Plan& plan) {
  workloadbuilder::BuildOptions options;
  const std::string* pcn =
      AsString(MemberPath(deployment, {"spec", "template", "spec", "priorityClassName"}));
  if (pcn == nullptr || pcn->empty()) return options;
  const auto it = in.priority_classes.find(*pcn);
  if (it == in.priority_classes.end()) {
    AddEvent(plan, "Warning", kReasonPriorityClassSkipped,
             "PriorityClass " + *pcn +
                 " was not found; the Workload is created without priorityClassName");
  } else if (it->second > kMaxTemplatePriority) {
    AddEvent(plan, "Warning", kReasonPriorityClassSkipped,
             "PriorityClass " + *pcn + " has value " + std::to_string(it->second) +
                 ", above the 1000000000 a Workload accepts; the Workload is created without "
                 "priorityClassName");
  } else {
    options.priority_class_name = *pcn;
  }
  return options;
}

// The index of template "pgt-0" in the Workload, if any.
std::optional<std::size_t> TemplateIndex(const json& workload) {
  const json* templates = MemberPath(workload, {"spec", "podGroupTemplates"});
  if (templates == nullptr || !templates->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < templates->size(); ++i) {
    const std::string* name = AsString(objects::Member((*templates)[i], "name"));
    if (name != nullptr && *name == workloadbuilder::kPodGroupTemplateName) return i;
  }
  return std::nullopt;
}

// The Deployment to plan for, or nullptr (with plan.note saying why) when
// there is nothing to plan: it is gone, being deleted, or has no name or UID.
const json* Plannable(const PlanInput& in, Plan& plan) {
  if (in.deployment == nullptr || !in.deployment->is_object()) {
    plan.note = "the Deployment is gone";
    return nullptr;
  }
  const json& deployment = *in.deployment;
  if (objects::IsTerminating(deployment)) {
    plan.note = "the Deployment is being deleted; garbage collection removes its objects";
    return nullptr;
  }
  if (objects::UidOf(deployment).empty() || objects::NameOf(deployment).empty()) {
    plan.note = "the Deployment has no metadata.name or metadata.uid";
    return nullptr;
  }
  return &deployment;
}

// What a release did, for its Event: the gates lifted, the groups created
// for the pods that name them (each pod then scheduled on its own) and those
// the pods name that could not be.
std::string ReleaseWords(const internal::Release& r) {
  std::string out;
  if (r.lifted > 0) {
    out += "wasd lifted the " + std::string(workloadbuilder::kPodGroupGate) +
           " scheduling gate of " + std::to_string(r.lifted) + " pod(s)";
  }
  if (r.held > 0) {
    out += (out.empty() ? "" : "; ") + std::to_string(r.held) +
           " pod(s) carry no gate and are held by their scheduler until their group exists";
  }
  if (!r.created.empty()) {
    std::string names;
    for (const std::string& n : r.created) names += (names.empty() ? "" : ", ") + n;
    out += (out.empty() ? "" : "; ") +
           std::string("they name a group no gang will fill, so wasd created ") + names +
           " without a gang (each pod is placed on its own)";
  }
  if (!r.missing.empty()) {
    std::string names;
    for (const std::string& n : r.missing) names += (names.empty() ? "" : ", ") + n;
    out += (out.empty() ? "" : "; ") + std::string("they name group ") + names +
           ", which does not exist and which wasd cannot create, so no scheduler places "
           "them: delete those pods so that their ReplicaSet re-creates them";
  }
  return out;
}

// Q15: pods marked for wasd whose Deployment lost its carrier (removed
// through /status, an exported manifest without the annotation) would wait
// forever: release them.
void PlanWithoutConfig(const PlanInput& in, const json& deployment, Plan& plan) {
  plan.note = "the Deployment has no scheduling configuration";
  const internal::Release r = internal::ReleaseAllGates(in, deployment, plan);
  if (!r.any()) return;
  AddEvent(plan, "Warning", kReasonGatesLifted,
           "The Deployment has no " + std::string(workloadbuilder::kSchedulingAnnotation) +
               " annotation or spec.scheduling, but its pods were made for a gang: " +
               ReleaseWords(r) + ". Remove the " + std::string(workloadbuilder::kManagedLabel) +
               " label from the pod template, or add the annotation back");
}

// A configuration stored without the webhook's check (written through a path
// it did not see, or while it failed open): say so, and do not hold pods for
// it.
void PlanInvalidConfig(const PlanInput& in, const json& deployment,
                       const workloadbuilder::FieldErrorList& errors, Plan& plan) {
  plan.note =
      "the scheduling configuration is invalid: " + workloadbuilder::AggregateMessage(errors);
  const internal::Release r = internal::ReleaseAllGates(in, deployment, plan);
  std::string message =
      "The stored scheduling configuration is invalid, so wasd manages no "
      "Workload or PodGroups for this Deployment and its pods get no gang";
  if (r.any()) message += " (" + ReleaseWords(r) + ")";
  AddEvent(plan, "Warning", kReasonInvalidConfiguration,
           message + ": " + workloadbuilder::AggregateMessage(errors) + ". Fix the " +
               std::string(workloadbuilder::kSchedulingAnnotation) + " annotation");
}

// Step 1 without our Workload: a foreign object with its name stops
// everything; otherwise create it, and plan again once its UID is known.
void PlanNewWorkload(const PlanInput& in, const json& deployment, const json& config,
                     const std::string& wanted, Plan& plan) {
  if (const json* other = FindByName(in.workloads, wanted)) {
    AddEvent(plan, "Warning", kReasonForeignObject,
             "Workload " + wanted + " exists but is not controlled by this Deployment" +
                 (objects::ControllerUid(*other).empty()
                      ? std::string(" (it has no controller)")
                      : " (controller: " + objects::ControllerKind(*other) + " " +
                            objects::ControllerName(*other) + ")") +
                 "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates "
                 "for this Deployment until it is removed");
    plan.note = "foreign Workload " + wanted;
    return;
  }
  workloadbuilder::BuildOptions options = PriorityOptions(in, deployment, plan);
  options.api_version = in.scheduling_api_version;
  workloadbuilder::BuildResult built = workloadbuilder::BuildWorkload(deployment, config, options);
  if (!built.ok()) {
    plan.actions.clear();
    plan.note = "cannot build the Workload: " + built.error;
    return;
  }
  const std::optional<std::int64_t> min_count =
      objects::GangMinCount(MemberPath(built.object, {"spec", "podGroupTemplates"})->at(0));
  plan.actions.insert(plan.actions.begin(), Action::CreateWorkload(wanted, std::move(built.object),
                                                                   min_count.value_or(0)));
  AddEvent(plan, "Normal", kReasonWorkloadCreated,
           "Created Workload " + wanted +
               (min_count ? " (gang, minCount " + std::to_string(*min_count) + ")" : " (basic)"));
  plan.needs_replan = true;
  plan.note = "Workload created; PodGroups follow once its UID is known";
}

// gang.minCount of our Workload's template `index`: explicit, else replicas;
// an existing Workload keeps its value when the Deployment is at zero. Plans
// the patch when it changes and applies it to `workload` (the Workload as it
// will be, for building PodGroups). nullopt for the basic policy.
std::optional<std::int64_t> PlanWorkloadMinCount(const json& deployment, const json& config,
                                                 std::size_t index, json& workload, Plan& plan) {
  json& tmpl = workload["spec"]["podGroupTemplates"][index];
  const std::optional<std::int64_t> current = objects::GangMinCount(tmpl);
  if (!current || !workloadbuilder::IsGang(config)) return std::nullopt;
  const std::int64_t replicas = objects::ReplicasOf(deployment);
  const std::optional<std::int64_t> explicit_count = workloadbuilder::ExplicitMinCount(config);
  const std::int64_t desired =
      explicit_count ? *explicit_count : (replicas > 0 ? replicas : *current);
  if (desired != *current && desired >= 1) {
    plan.actions.push_back(Action::PatchWorkloadMinCount(objects::NameOf(workload),
                                                         objects::UidOf(workload), index, desired));
    tmpl["schedulingPolicy"]["gang"]["minCount"] = desired;
  }
  return objects::GangMinCount(tmpl);
}

// Q11: claims the intent asks for that the stored Workload template lacks
// (the API server strips them when DRAWorkloadResourceClaims is off).
// PodGroups are built from the stored Workload, so their own create would
// never show the loss: compare with the intent here.
std::vector<std::string> MissingClaims(const json& config, const json& workload,
                                       std::size_t index) {
  const json* intent = objects::Member(config, "resourceClaims");
  if (intent == nullptr) return {};
  return StrippedClaims({{"spec", {{"resourceClaims", *intent}}}},
                        {{"spec", MemberPath(workload, {"spec", "podGroupTemplates"})->at(index)}});
}

// The pod template's wasd.io/backend label names no backend (the webhook
// stamps only backend names; this object was written past it): hold the pods
// and say so, never schedule them without a group.
void PlanUnknownBackend(const json& deployment, Plan& plan) {
  const std::string* value = AsString(MemberPath(
      deployment, {"spec", "template", "metadata", "labels", workloadbuilder::kBackendLabel}));
  const std::string shown = value != nullptr ? "\"" + *value + "\"" : "not a string";
  plan.note = "unknown backend " + shown;
  AddEvent(plan, "Warning", kReasonInvalidConfiguration,
           "The pod template's label " + std::string(workloadbuilder::kBackendLabel) + " is " +
               shown +
               ", which names no backend (native, volcano, kai, coscheduling): wasd creates no "
               "group objects for this Deployment, and its webhook refuses the Deployment's new "
               "pods until the label names a backend");
}

}  // namespace

std::optional<workloadbuilder::Backend> BackendOf(const json& deployment) {
  const json* labels = MemberPath(deployment, {"spec", "template", "metadata", "labels"});
  return workloadbuilder::BackendOfLabels(labels != nullptr ? *labels : json());
}

Plan PlanDeployment(const PlanInput& in) {
  Plan plan;
  const json* deployment = Plannable(in, plan);
  if (deployment == nullptr) return plan;
  const workloadbuilder::SchedulingConfig cfg = workloadbuilder::ReadSchedulingConfig(*deployment);
  if (!cfg.present()) {
    PlanWithoutConfig(in, *deployment, plan);
    return plan;
  }
  // V6: rules/ decides whether the stored configuration is usable, as the
  // webhook's CREATE rules do.
  const rules::ConfigVerdict verdict = rules::CheckSchedulingConfig(cfg);
  if (!verdict.usable) {
    PlanInvalidConfig(in, *deployment, verdict.errors, plan);
    return plan;
  }

  const std::optional<workloadbuilder::Backend> backend = BackendOf(*deployment);
  if (!backend) {
    PlanUnknownBackend(*deployment, plan);
    return plan;
  }
  plan.backend = *backend;
  if (*backend != workloadbuilder::Backend::kNative) {
    internal::PlanBackendGroups(in, *deployment, cfg.config, *backend, plan);
    return plan;
  }

  // Step 1: the Workload.
  const std::string uid = objects::UidOf(*deployment);
  const std::string wanted =
      workloadbuilder::GenerateWorkloadName(objects::NameOf(*deployment), uid);
  const json* ours = FindOurWorkload(in, uid, wanted);
  if (ours == nullptr) {
    PlanNewWorkload(in, *deployment, cfg.config, wanted, plan);
    return plan;
  }
  if (objects::IsTerminating(*ours)) {
    plan.note = "Workload " + objects::NameOf(*ours) + " is being deleted; waiting to re-create it";
    internal::AddRequeue(plan, kTerminatingRecheck);
    return plan;
  }
  json workload = *ours;  // with the minCount this plan sets, for building PodGroups
  const std::optional<std::size_t> index = TemplateIndex(workload);
  if (!index) {
    plan.note = "Workload " + objects::NameOf(workload) + " has no template " +
                std::string(workloadbuilder::kPodGroupTemplateName);
    return plan;
  }
  const std::optional<std::int64_t> min_count =
      PlanWorkloadMinCount(*deployment, cfg.config, *index, workload, plan);

  // Steps 2 and 3: PodGroups and gates.
  internal::PlanPodGroups(in, *deployment, workload, min_count,
                          MissingClaims(cfg.config, workload, *index), plan);
  return plan;
}

}  // namespace wasd::planner
