// PlanDeployment: the Workload step here, the PodGroup and gate steps in
// plan_podgroups.cc (see plan.h for the rules).
#include "planner/plan.h"

#include <algorithm>
#include <string>

#include "planner/plan_internal.h"
#include "rules/usable_config.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/json_util.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner {

using nlohmann::json;
using workloadbuilder::AsString;
using workloadbuilder::MemberPath;

namespace internal {

void AddEvent(Plan& plan, std::string_view type, std::string_view reason, std::string message) {
  Action a;
  a.kind = ActionKind::kEvent;
  a.event_type = std::string(type);
  a.reason = std::string(reason);
  a.message = std::move(message);
  plan.actions.push_back(std::move(a));
}

void AddRequeue(Plan& plan, std::chrono::milliseconds delay) {
  for (const Action& a : plan.actions) {
    if (a.kind == ActionKind::kRequeueAfter) return;
  }
  Action a;
  a.kind = ActionKind::kRequeueAfter;
  a.delay = delay;
  plan.actions.push_back(std::move(a));
}

std::vector<const json*> SortedByName(const std::vector<Object>& objects) {
  std::vector<const json*> out;
  out.reserve(objects.size());
  for (const Object& o : objects) {
    if (o != nullptr && o->is_object()) out.push_back(o.get());
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const json* a, const json* b) { return NameOf(*a) < NameOf(*b); });
  return out;
}

}  // namespace internal

namespace {

using internal::AddEvent;

// Our Workload: controlled by the Deployment's UID; the one with the
// generated name first when (against all expectations) there are several.
const json* FindOurWorkload(const PlanInput& in, std::string_view deployment_uid,
                            std::string_view wanted_name) {
  const json* found = nullptr;
  for (const json* w : internal::SortedByName(in.workloads)) {
    if (ControllerUid(*w) != deployment_uid) continue;
    if (NameOf(*w) == wanted_name) return w;
    if (found == nullptr) found = w;
  }
  return found;
}

const json* FindByName(const std::vector<Object>& objects, std::string_view name) {
  for (const Object& o : objects) {
    if (o != nullptr && NameOf(*o) == name) return o.get();
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
    const std::string* name = AsString(workloadbuilder::Member((*templates)[i], "name"));
    if (name != nullptr && *name == workloadbuilder::kPodGroupTemplateName) return i;
  }
  return std::nullopt;
}

}  // namespace

Plan PlanDeployment(const PlanInput& in) {
  Plan plan;
  if (in.deployment == nullptr || !in.deployment->is_object()) {
    plan.note = "the Deployment is gone";
    return plan;
  }
  const json& deployment = *in.deployment;
  if (IsTerminating(deployment)) {
    plan.note = "the Deployment is being deleted; garbage collection removes its objects";
    return plan;
  }
  const std::string uid = UidOf(deployment);
  const std::string name = NameOf(deployment);
  if (uid.empty() || name.empty()) {
    plan.note = "the Deployment has no metadata.name or metadata.uid";
    return plan;
  }
  const workloadbuilder::SchedulingConfig cfg = workloadbuilder::ReadSchedulingConfig(deployment);
  if (!cfg.present()) {
    plan.note = "the Deployment has no scheduling configuration";
    // Q15: pods marked for wasd whose Deployment lost its carrier (removed
    // through /status, an exported manifest without the annotation) would
    // wait forever: release them.
    if (const std::size_t n = internal::LiftAllGates(in, deployment, plan); n > 0) {
      AddEvent(plan, "Warning", kReasonGatesLifted,
               "The Deployment has no " + std::string(workloadbuilder::kSchedulingAnnotation) +
                   " annotation or spec.scheduling, but " + std::to_string(n) +
                   " of its pods carry the " + std::string(workloadbuilder::kPodGroupGate) +
                   " scheduling gate: wasd lifted it, and they are scheduled without a "
                   "PodGroup. Remove the " +
                   std::string(workloadbuilder::kManagedLabel) +
                   " label from the pod template, or add the annotation back");
    }
    return plan;
  }
  // V6: rules/ decides whether the stored configuration is usable, as the
  // webhook's CREATE rules do.
  const rules::ConfigVerdict verdict = rules::CheckSchedulingConfig(cfg);
  const workloadbuilder::FieldErrorList& errors = verdict.errors;
  if (!verdict.usable) {
    plan.note =
        "the scheduling configuration is invalid: " + workloadbuilder::AggregateMessage(errors);
    // Stored without the webhook's check (written through a path it did not
    // see, or while it failed open): say so, and do not hold pods for it.
    const std::size_t n = internal::LiftAllGates(in, deployment, plan);
    std::string message =
        "The stored scheduling configuration is invalid, so wasd manages no "
        "Workload or PodGroups for this Deployment";
    if (n > 0) message += " and lifted the scheduling gate of " + std::to_string(n) + " pod(s)";
    AddEvent(plan, "Warning", kReasonInvalidConfiguration,
             message + ": " + workloadbuilder::AggregateMessage(errors));
    return plan;
  }

  // Step 1: the Workload.
  const std::string wanted = workloadbuilder::GenerateWorkloadName(name, uid);
  const json* ours = FindOurWorkload(in, uid, wanted);
  if (ours == nullptr) {
    if (const json* other = FindByName(in.workloads, wanted)) {
      AddEvent(plan, "Warning", kReasonForeignObject,
               "Workload " + wanted + " exists but is not controlled by this Deployment" +
                   (ControllerUid(*other).empty() ? std::string(" (it has no controller)")
                                                  : " (controller: " + ControllerKind(*other) +
                                                        " " + ControllerName(*other) + ")") +
                   "; wasd leaves it alone, creates no PodGroups and lifts no scheduling gates "
                   "for this Deployment until it is removed");
      plan.note = "foreign Workload " + wanted;
      return plan;
    }
    const workloadbuilder::BuildOptions options = PriorityOptions(in, deployment, plan);
    workloadbuilder::BuildResult built =
        workloadbuilder::BuildWorkload(deployment, cfg.config, options);
    if (!built.ok()) {
      plan.actions.clear();
      plan.note = "cannot build the Workload: " + built.error;
      return plan;
    }
    Action create;
    create.kind = ActionKind::kCreateWorkload;
    create.name = wanted;
    const std::optional<std::int64_t> min_count =
        GangMinCount(MemberPath(built.object, {"spec", "podGroupTemplates"})->at(0));
    create.min_count = min_count.value_or(0);
    create.object = std::move(built.object);
    plan.actions.insert(plan.actions.begin(), std::move(create));
    AddEvent(plan, "Normal", kReasonWorkloadCreated,
             "Created Workload " + wanted +
                 (min_count ? " (gang, minCount " + std::to_string(*min_count) + ")" : " (basic)"));
    plan.needs_replan = true;
    plan.note = "Workload created; PodGroups follow once its UID is known";
    return plan;
  }
  if (IsTerminating(*ours)) {
    plan.note = "Workload " + NameOf(*ours) + " is being deleted; waiting to re-create it";
    internal::AddRequeue(plan, kTerminatingRecheck);
    return plan;
  }

  // minCount: explicit, else replicas; an existing Workload keeps its value
  // when the Deployment is at zero.
  json workload = *ours;  // with the minCount this plan sets, for building PodGroups
  std::optional<std::int64_t> min_count;
  if (const auto index = TemplateIndex(workload)) {
    json& tmpl = workload["spec"]["podGroupTemplates"][*index];
    const std::optional<std::int64_t> current = GangMinCount(tmpl);
    if (current && workloadbuilder::IsGang(cfg.config)) {
      const std::int64_t replicas = ReplicasOf(deployment);
      const std::optional<std::int64_t> explicit_count =
          workloadbuilder::ExplicitMinCount(cfg.config);
      const std::int64_t desired =
          explicit_count ? *explicit_count : (replicas > 0 ? replicas : *current);
      if (desired != *current && desired >= 1) {
        Action patch;
        patch.kind = ActionKind::kPatchWorkloadMinCount;
        patch.name = NameOf(workload);
        patch.uid = UidOf(workload);
        patch.min_count = desired;
        patch.patch = WorkloadMinCountPatch(patch.uid, *index, desired);
        plan.actions.push_back(std::move(patch));
        tmpl["schedulingPolicy"]["gang"]["minCount"] = desired;
      }
      min_count = GangMinCount(tmpl);
    }
  } else {
    plan.note = "Workload " + NameOf(workload) + " has no template " +
                std::string(workloadbuilder::kPodGroupTemplateName);
    return plan;
  }

  // Q11: claims the intent asks for that the stored Workload template lacks
  // (the API server strips them when DRAWorkloadResourceClaims is off).
  // PodGroups are built from the stored Workload, so their own create would
  // never show the loss: compare with the intent here.
  std::vector<std::string> missing;
  if (const auto index = TemplateIndex(workload)) {
    const json* intent = workloadbuilder::Member(cfg.config, "resourceClaims");
    if (intent != nullptr) {
      missing = StrippedClaims({{"spec", {{"resourceClaims", *intent}}}},
                               {{"spec", workload["spec"]["podGroupTemplates"][*index]}});
    }
  }

  // Steps 2 and 3: PodGroups and gates.
  internal::PlanPodGroups(in, deployment, workload, min_count, missing, plan);
  return plan;
}

}  // namespace wasd::planner
