// The PodGroup and gate steps of PlanDeployment (plan.h, steps 2 and 3).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "objects/json_util.h"
#include "planner/plan_groups_internal.h"
#include "planner/plan_internal.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/field_path.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/pod_holds.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner::internal {

using nlohmann::json;
using objects::AsString;
using objects::Member;
using workloadbuilder::Backend;

namespace {

// What the PodGroup step builds for: native (from our Workload, with its
// minCount and the claims it lost) or another backend (compiled from the
// Deployment's configuration; `workload` is then an empty object).
struct Target {
  Backend backend = Backend::kNative;
  const json& workload;
  std::optional<std::int64_t> min_count;  // native
  const std::vector<std::string>& missing_claims;
  const json* config = nullptr;  // non-native
  bool native() const { return backend == Backend::kNative; }
};

// The members of `rs` that KAI counts as active in the ReplicaSet's group:
// naming it, bound to a node, not finished and not being deleted (a member
// another actor re-linked counts in the other group, not in ours).
std::int64_t ActiveMembers(const PlanInput& in, const json& rs) {
  const std::string rs_uid = objects::UidOf(rs);
  const std::string pg_name = workloadbuilder::PodGroupName(objects::NameOf(rs), rs_uid);
  std::int64_t n = 0;
  for (const Object& pod : in.pods) {
    if (pod == nullptr || objects::ControllerUid(*pod) != rs_uid || objects::IsTerminating(*pod) ||
        Finished(*pod) || workloadbuilder::LinkedPodGroupName(*pod, Backend::kKai) != pg_name) {
      continue;
    }
    const std::string* node = AsString(objects::MemberPath(*pod, {"spec", "nodeName"}));
    if (node != nullptr && !node->empty()) ++n;
  }
  return n;
}

// KAI evicts every active member of a group whose active members stay below
// minMember longer than its staleness grace period (docs/backends.md "KAI:
// what a scale-up means"). So a derived minMember (no explicit minCount) of a
// group that already has active members never goes above them: it grows to
// `desired` only as the new members become active (KAI places members beyond
// minMember one by one). `current` is the stored value (nullopt: the group is
// being created). Other backends, an explicit minCount, and a lower value are
// `desired` unchanged.
std::int64_t KaiMinMember(const PlanInput& in, const json& rs, const Target& target,
                          std::int64_t desired, std::optional<std::int64_t> current) {
  if (target.backend != Backend::kKai || workloadbuilder::ExplicitMinCount(*target.config)) {
    return desired;
  }
  const std::int64_t active = ActiveMembers(in, rs);
  if (active == 0) return current ? std::min(desired, *current) : desired;
  return std::min(desired, std::max(current.value_or(active), active));
}

// The ClaimsStripped Warning that goes with a PodGroup create when the
// stored Workload lacks claims the Deployment asks for.
std::string ClaimsStrippedMessage(const json& workload, const std::string& pg_name,
                                  const std::vector<std::string>& missing_claims) {
  std::string names;
  for (const std::string& n : missing_claims) names += (names.empty() ? "" : ", ") + n;
  std::string warning = "Workload " + objects::NameOf(workload);
  warning.append(" was stored without the resourceClaims the Deployment asks for (")
      .append(names)
      .append("), so PodGroup ")
      .append(pg_name)
      .append(
          " has none either: the API server dropped them (is the DRAWorkloadResourceClaims "
          "feature gate off?); pods still reference the claims by name");
  return warning;
}

// An active ReplicaSet without its PodGroup: create it, then lift the gates.
// The group object `target` wants for `rs`.
workloadbuilder::BuildResult BuildGroup(const PlanInput& in, const json& deployment, const json& rs,
                                        const Target& target) {
  if (target.native()) {
    return workloadbuilder::BuildPodGroup(target.workload, rs, in.scheduling_api_version);
  }
  return workloadbuilder::BuildBackendPodGroup(target.backend, deployment, *target.config, rs,
                                               in.facts);
}

void PlanCreatePodGroup(const PlanInput& in, const json& deployment, const std::string& pg_name,
                        const json& rs, const Target& target, Plan& plan) {
  workloadbuilder::BuildResult built = BuildGroup(in, deployment, rs, target);
  if (!built.ok()) {
    plan.note = "cannot build " + GroupWord(target.backend) + " " + pg_name + ": " + built.error;
    return;
  }
  std::optional<std::int64_t> min_count = target.min_count;
  if (!target.native()) {
    const json::json_pointer pointer{
        std::string(workloadbuilder::Info(target.backend).min_count_pointer)};
    min_count = IntAt(built.object, pointer.to_string());
    if (min_count) {
      *min_count = KaiMinMember(in, rs, target, *min_count, std::nullopt);
      built.object[pointer] = *min_count;
    }
  }
  const auto& missing_claims = target.missing_claims;
  const json& workload = target.workload;
  plan.actions.push_back(
      Action::CreatePodGroup(pg_name, std::move(built.object), min_count.value_or(0)));
  std::string message = "Created " + GroupWord(target.backend) + " " + pg_name;
  message.append(" for ReplicaSet ").append(objects::NameOf(rs));
  if (!target.native()) {
    message.append(" (minMember ").append(std::to_string(min_count.value_or(0))).append(")");
  } else if (min_count) {
    message.append(" (gang, minCount ").append(std::to_string(*min_count)).append(")");
  } else {
    message.append(" (basic)");
  }
  AddEvent(plan, "Normal", kReasonPodGroupCreated, std::move(message));
  if (!missing_claims.empty()) {
    AddEvent(plan, "Warning", kReasonClaimsStripped,
             ClaimsStrippedMessage(workload, pg_name, missing_claims));
  }
  AddLiftGates(in, rs, plan, target.native() ? std::string_view(pg_name) : std::string_view());
}

// A non-native group object's minMember follows the compiled one (explicit
// minCount, else the Deployment's replicas; on KAI see KaiMinMember). At zero
// replicas the Deployment is on its way down (or its update is behind): the
// value is kept.
void PlanBackendMinCount(const PlanInput& in, const json& deployment, const std::string& pg_name,
                         const json& pg, const json& rs, const Target& target, Plan& plan) {
  if (objects::ReplicasOf(deployment) == 0 && !workloadbuilder::ExplicitMinCount(*target.config))
    return;
  const workloadbuilder::BuildResult built = BuildGroup(in, deployment, rs, target);
  if (!built.ok()) {
    plan.note = "cannot build " + GroupWord(target.backend) + " " + pg_name + ": " + built.error;
    return;
  }
  const std::string_view pointer = workloadbuilder::Info(target.backend).min_count_pointer;
  std::optional<std::int64_t> desired = IntAt(built.object, pointer);
  if (desired) *desired = KaiMinMember(in, rs, target, *desired, IntAt(pg, pointer));
  if (desired && IntAt(pg, pointer) != desired) {
    plan.actions.push_back(
        Action::PatchPodGroupMinCount(pg_name, objects::UidOf(pg), *desired, pointer));
  }
}

// An active ReplicaSet with its (live) PodGroup: adopt it, keep minCount and
// the Workload reference in step, then lift the gates.
void PlanKeepInStep(const PlanInput& in, const json& deployment, const std::string& pg_name,
                    const json& pg, const json& rs, const Target& target, Plan& plan) {
  if (objects::ControllerUid(pg) != objects::UidOf(rs)) {
    // Ours (it references our Workload) under this incarnation's name but
    // controlled by nothing alive: the ReplicaSet takes it, as it adopts
    // orphans.
    plan.actions.push_back(
        Action::PatchPodGroupOwners(pg_name, objects::UidOf(pg), PodGroupAdoptPatch(pg, rs)));
  }
  if (!target.native()) {
    if (std::optional<json> marks = ManagedMarksPatch(pg, deployment)) {
      plan.actions.push_back(
          Action::PatchPodGroupOwners(pg_name, objects::UidOf(pg), std::move(*marks)));
    }
    PlanBackendMinCount(in, deployment, pg_name, pg, rs, target, plan);
    AddLiftGates(in, rs, plan);
    return;
  }
  const json& workload = target.workload;
  const std::optional<std::int64_t> min_count = target.min_count;
  const json* spec = objects::Member(pg, "spec");
  if (min_count && (spec == nullptr || objects::GangMinCount(*spec) != min_count)) {
    plan.actions.push_back(Action::PatchPodGroupMinCount(pg_name, objects::UidOf(pg), *min_count));
  }
  const objects::OwnerRefAt wref = objects::FindOwnerRef(pg, "Workload");
  const std::string* wref_uid = wref.ref != nullptr ? AsString(Member(*wref.ref, "uid")) : nullptr;
  const std::string* wref_version =
      wref.ref != nullptr ? AsString(Member(*wref.ref, "apiVersion")) : nullptr;
  // L5: the reference follows the version in use (v1beta1 to v1), so that the
  // garbage collector can still resolve it once the old version is removed.
  if (wref_uid == nullptr || *wref_uid != objects::UidOf(workload) || wref_version == nullptr ||
      *wref_version != in.scheduling_api_version) {
    plan.actions.push_back(Action::PatchPodGroupOwners(
        pg_name, objects::UidOf(pg), PodGroupOwnerPatch(pg, workload, in.scheduling_api_version)));
  }
  AddLiftGates(in, rs, plan, pg_name);
}

}  // namespace

namespace {

// The MemberUnlinked Warning for the gated pods of `rs` that do not name
// `group` (AddLiftGates keeps their gate). At most a few names, then a count.
void WarnUnlinked(const json& rs, std::string_view group, const std::vector<std::string>& pods,
                  Plan& plan) {
  if (pods.empty()) return;
  constexpr std::size_t kNamesShown = 5;  // an Event stays readable; the count says the rest
  std::string names;
  for (std::size_t i = 0; i < pods.size() && i < kNamesShown; ++i) {
    names += (names.empty() ? "" : ", ") + pods[i];
  }
  if (pods.size() > kNamesShown)
    names += " and " + std::to_string(pods.size() - kNamesShown) + " more";
  std::string message = std::to_string(pods.size()) + " pod(s) of ReplicaSet ";
  message.append(objects::NameOf(rs))
      .append(" (")
      .append(names)
      .append(") carry the ")
      .append(workloadbuilder::kPodGroupGate)
      .append(" scheduling gate but do not name PodGroup ")
      .append(group)
      .append(
          " in spec.schedulingGroup: kube-apiserver dropped the field when they were created "
          "(feature gate GenericWorkload was off then), and it cannot be set later. wasd "
          "keeps them gated, since without the link they would be scheduled outside the "
          "gang: delete them, and their ReplicaSet re-creates them linked");
  AddEvent(plan, "Warning", kReasonMemberUnlinked, std::move(message));
}

}  // namespace

void AddLiftGates(const PlanInput& in, const json& rs, Plan& plan, std::string_view group) {
  const std::string rs_uid = objects::UidOf(rs);
  std::vector<std::string> unlinked;
  for (const json* pod : SortedByName(in.pods)) {
    if (objects::ControllerUid(*pod) != rs_uid || objects::IsTerminating(*pod)) continue;
    const std::optional<std::size_t> index =
        objects::GateIndex(*pod, workloadbuilder::kPodGroupGate);
    if (!index) continue;
    if (!group.empty() && workloadbuilder::LinkedPodGroupName(*pod, Backend::kNative) != group) {
      unlinked.push_back(objects::NameOf(*pod));
      continue;
    }
    plan.actions.push_back(Action::LiftGate(objects::NameOf(*pod), objects::UidOf(*pod), *index));
  }
  WarnUnlinked(rs, group, unlinked, plan);
}

Release ReleaseAllGates(const PlanInput& in, const json& deployment, Plan& plan) {
  Release out;
  const std::string deployment_uid = objects::UidOf(deployment);
  const std::optional<Backend> backend = BackendOf(deployment);
  plan.backend = backend.value_or(Backend::kNative);
  std::set<std::string> existing;
  for (const Object& pg : in.podgroups) {
    if (pg != nullptr) existing.insert(objects::NameOf(*pg));
  }
  for (const json* rs : SortedByName(in.replicasets)) {
    if (objects::ControllerUid(*rs) != deployment_uid) continue;
    const std::string pg_name =
        workloadbuilder::PodGroupName(objects::NameOf(*rs), objects::UidOf(*rs));
    // Release by link: the pods that name the ReplicaSet's group and wait
    // (gated or held by their scheduler), whether or not they carry a gate.
    std::size_t naming = 0;
    std::size_t held = 0;
    const std::string rs_uid = objects::UidOf(*rs);
    for (const Object& pod : in.pods) {
      if (pod == nullptr || objects::ControllerUid(*pod) != rs_uid) continue;
      const workloadbuilder::PodHoldState state = workloadbuilder::HoldStateOf(*pod, plan.backend);
      if (state == workloadbuilder::PodHoldState::kDone ||
          workloadbuilder::LinkedPodGroupName(*pod, plan.backend) != pg_name) {
        continue;
      }
      ++naming;
      if (state == workloadbuilder::PodHoldState::kScheduler) ++held;
    }
    const std::size_t before = plan.actions.size();
    AddLiftGates(in, *rs, plan);
    const std::size_t lifted = plan.actions.size() - before;
    out.lifted += lifted;
    if (naming == 0 || existing.count(pg_name) > 0) continue;
    out.held += held;
    workloadbuilder::BuildResult built =
        backend ? workloadbuilder::BuildReleaseGroup(*backend, deployment, *rs, in.facts,
                                                     in.scheduling_api_version)
                : workloadbuilder::BuildResult{nullptr, "the backend label names no backend"};
    if (!built.ok()) {
      out.missing.push_back(pg_name);
      continue;
    }
    const std::int64_t min_count = *backend == Backend::kNative ? 0 : 1;
    plan.actions.insert(plan.actions.begin() + static_cast<std::ptrdiff_t>(before),
                        Action::CreatePodGroup(pg_name, std::move(built.object), min_count));
    out.created.push_back(GroupWord(*backend) + " " + pg_name);
  }
  return out;
}

namespace {

// Where backend `b` keeps a pod's link, for messages.
std::string LinkWords(Backend b) {
  switch (b) {
    case Backend::kVolcano:
      return "annotation " + std::string(workloadbuilder::kVolcanoGroupAnnotation);
    case Backend::kKai: return "annotation " + std::string(workloadbuilder::kKaiGroupAnnotation);
    case Backend::kCoscheduling:
      return "label " + std::string(workloadbuilder::kCoschedulingGroupLabel);
    case Backend::kNative: break;
  }
  return "spec.schedulingGroup.podGroupName";
}

// M3: members of `rs` whose link names another group than `pg_name` (wasd's
// webhook linked them to it; another actor changed the link since). They are
// still the ReplicaSet's (gates, counts); a Warning per pod names the change.
void WarnRelinked(const PlanInput& in, Backend backend, const std::string& pg_name, const json& rs,
                  Plan& plan) {
  const std::string rs_uid = objects::UidOf(rs);
  for (const json* pod : SortedByName(in.pods)) {
    if (objects::ControllerUid(*pod) != rs_uid || objects::IsTerminating(*pod) || Finished(*pod))
      continue;
    const std::string linked = workloadbuilder::LinkedPodGroupName(*pod, backend);
    if (linked.empty() || linked == pg_name) continue;
    const std::string rs_name = objects::NameOf(rs);
    std::string message = "Pod " + objects::NameOf(*pod);
    message += " of ReplicaSet ";
    message += rs_name;
    message += " names ";
    message += GroupWord(backend);
    message += " ";
    message += linked;
    message += " instead of ";
    message += pg_name;
    message += ", which wasd made for it: another actor changed its ";
    message += LinkWords(backend);
    message += ". wasd still counts it as a member of ReplicaSet ";
    message += rs_name;
    message += ", but the scheduler places it in ";
    message += linked;
    message += ", outside the gang";
    if (backend == Backend::kKai) {
      message += " (KAI's podgrouper before v0.15.0 ignores " +
                 std::string(workloadbuilder::kKaiSkipPodgrouperAnnotation) +
                 " and rewrites the link: wasd needs KAI v0.15.0 or later)";
    }
    AddEvent(plan, "Warning", kReasonMemberRelinked, std::move(message));
  }
}

void PlanGroups(const PlanInput& in, const json& deployment, const Target& target, Plan& plan) {
  const json& workload = target.workload;
  const PodGroupScene scene = SceneOf(in, deployment);
  if (PlanForeign(in, scene, workload, plan)) return;
  PlanDeletions(in, scene, deployment, workload, plan);

  // Active ReplicaSets: create, keep in step, lift gates.
  bool waiting = false;
  bool stale = false;
  for (const auto& [pg_name, rs] : scene.wanted) {
    const auto it = scene.pg_by_name.find(pg_name);
    if (it == scene.pg_by_name.end() && objects::ReplicasOf(deployment) == 0) {
      // The minCount of a Deployment at zero is the one it had before; a
      // PodGroup created with it would hold a smaller gang until patched.
      plan.note = "ReplicaSet " + objects::NameOf(*rs) +
                  " has replicas while the Deployment has none; " +
                  "waiting for the Deployment's update";
      stale = true;
    } else if (it == scene.pg_by_name.end()) {
      PlanCreatePodGroup(in, deployment, pg_name, *rs, target, plan);
    } else if (objects::IsTerminating(*it->second)) {
      waiting = PlanTerminating(in, pg_name, *it->second, *rs, plan) || waiting;
    } else {
      PlanKeepInStep(in, deployment, pg_name, *it->second, *rs, target, plan);
    }
    if (!target.native()) WarnRelinked(in, target.backend, pg_name, *rs, plan);
  }
  if (waiting) AddRequeue(plan, kTerminatingRecheck);
  if (stale) AddRequeue(plan, kStaleDeploymentRecheck);
}

}  // namespace

void PlanPodGroups(const PlanInput& in, const json& deployment, const json& workload,
                   std::optional<std::int64_t> min_count,
                   const std::vector<std::string>& missing_claims, Plan& plan) {
  PlanGroups(in, deployment, Target{Backend::kNative, workload, min_count, missing_claims}, plan);
}

void PlanBackendGroups(const PlanInput& in, const json& deployment, const json& config,
                       Backend backend, Plan& plan) {
  static const json kNoWorkload = json::object();
  static const std::vector<std::string> kNoClaims;
  PlanGroups(in, deployment, Target{backend, kNoWorkload, std::nullopt, kNoClaims, &config}, plan);
}

}  // namespace wasd::planner::internal
