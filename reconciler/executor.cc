#include "reconciler/executor.h"

#include <algorithm>
#include <memory>
#include <string>

#include "objects/json_util.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/pod_holds.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::reconciler {

using objects::ControllerKind;
using objects::ControllerName;
using objects::ControllerRef;
using objects::ControllerUid;
using objects::IsTerminating;
using objects::NameOf;
using objects::NamespaceOf;
using objects::Object;
using objects::ReplicasOf;
using objects::UidOf;
using planner::Action;
using planner::ActionKind;
using planner::ActionKindName;
using planner::kReasonClaimsStripped;
using planner::kReasonFailedPodGroupCreate;
using planner::kReasonFailedWorkloadCreate;
using planner::Plan;
using planner::StrippedClaims;

using nlohmann::json;

namespace {

Object Share(json j) { return std::make_shared<const json>(std::move(j)); }

// A conditional write the world made stale: a missing object (404), a
// changed one (409 Conflict, failed UID precondition), or a failed JSON
// patch `test` (the API server answers 422 or 500 depending on version).
bool Stale(const base::Status& s) {
  return s.not_found() || s.conflict() || s.http_code() == 422 ||
         (s.http_code() == 500 && s.message().find("test") != std::string::npos);
}

}  // namespace

bool Executor::OwnerAlive(const std::string& ns, const json& object) {
  if (ControllerRef(object) == nullptr) return true;
  if (seen_deleted_ && !seen_deleted_(ns, NameOf(object))) return true;
  const kube::Resource resource =
      ControllerKind(object) == "Deployment" ? kube::Deployments() : kube::ReplicaSets();
  base::Result<json> owner = api_.Get(resource, ns, ControllerName(object));
  if (!owner.ok()) return !owner.status().not_found();  // unsure (API error): let the write decide
  // find/value only (IsTerminating): the answer is untrusted JSON.
  return UidOf(owner.value()) == ControllerUid(object) && !IsTerminating(owner.value());
}

void Executor::Refresh(Kind kind, const kube::Resource& resource, const std::string& ns,
                       const std::string& name) {
  base::Result<json> got = api_.Get(resource, ns, name);
  if (got.ok()) {
    recent_.Record(kind, Share(std::move(got).value()));
  } else if (got.status().not_found()) {
    recent_.RecordDeleted(kind, ns, name, "");
  }
}

bool Executor::Create(const json& deployment, const Action& action, const kube::Resource& workloads,
                      const kube::Resource& groups, ExecuteOutcome& out) {
  const bool workload = action.kind == ActionKind::kCreateWorkload;
  const Kind kind = workload ? Kind::kWorkload : Kind::kPodGroup;
  const kube::Resource resource = workload ? workloads : groups;
  const std::string ns = NamespaceOf(deployment);
  const std::string name = NameOf(action.object);
  // The caches are separate watches: a Workload (or PodGroup) deleted by the
  // garbage collector may be seen before its owner's deletion is. One live
  // read of the owner keeps us from re-creating an object for an owner that is
  // gone; its deletion event then ends the reconcile.
  if (!OwnerAlive(ns, action.object)) {
    log_.Info("owner is gone or being deleted; not creating", {{"name", name}});
    return false;
  }
  base::Result<json> created = api_.Create(resource, ns, action.object);
  if (created.ok()) {
    ++out.writes;
    metrics_.CountWrite(ActionKindName(action.kind));
    Object stored = Share(std::move(created).value());
    recent_.Record(kind, stored);
    ReportStrippedClaims(deployment, action, *stored);
    return true;
  }
  if (created.status().already_exists()) {
    log_.Info("create found an existing object; re-reading", {{"name", name}});
    Refresh(kind, resource, ns, name);
    out.replan = true;
    return false;
  }
  out.status = created.status();
  // Refused for good until something changes (a feature gate off, a policy,
  // the namespace going away): say so on the Deployment, not only in the log.
  const int code = created.status().http_code();
  // A 404: the resource is not served (a CRD removed, or the scheduling API
  // served under another version now); the controller re-checks the API.
  if (code == 400 || code == 403 || code == 404 || code == 422) {
    events_.Record(deployment, "Warning",
                   workload ? kReasonFailedWorkloadCreate : kReasonFailedPodGroupCreate,
                   std::string("Error creating ") + (workload ? "Workload " : "PodGroup ") + name +
                       ": " + created.status().message() + " (retrying with backoff)");
  }
  return false;
}

void Executor::ReportStrippedClaims(const json& deployment, const Action& action,
                                    const json& stored) {
  const bool workload = action.kind == ActionKind::kCreateWorkload;
  std::vector<std::string> stripped;
  if (workload) {
    // The Workload's template: sent vs stored (the server strips claims from
    // the PodGroupTemplate too, and PodGroups built from the stored Workload
    // would never show it).
    const json* sent = objects::MemberPath(action.object, {"spec", "podGroupTemplates"});
    const json* kept = objects::MemberPath(stored, {"spec", "podGroupTemplates"});
    if (sent != nullptr && sent->is_array() && !sent->empty()) {
      const json empty = json::object();
      stripped = StrippedClaims(
          {{"spec", sent->at(0)}},
          {{"spec", kept != nullptr && kept->is_array() && !kept->empty() ? kept->at(0) : empty}});
    }
  } else {
    stripped = StrippedClaims(action.object, stored);
  }
  if (stripped.empty()) return;
  std::string names;
  for (const std::string& n : stripped) names += (names.empty() ? "" : ", ") + n;
  events_.Record(deployment, "Warning", kReasonClaimsStripped,
                 std::string(workload ? "Workload " : "PodGroup ") + NameOf(action.object) +
                     " was stored without its resourceClaims (" + names +
                     "): the API server dropped them (is the DRAWorkloadResourceClaims feature "
                     "gate off?); pods still reference the claims by name");
}

bool Executor::Patch(const json& deployment, const Action& action, const kube::Resource& workloads,
                     const kube::Resource& groups, ExecuteOutcome& out) {
  Kind kind = Kind::kPodGroup;
  kube::Resource resource = groups;
  if (action.kind == ActionKind::kPatchWorkloadMinCount) {
    kind = Kind::kWorkload;
    resource = workloads;
  } else if (action.kind == ActionKind::kLiftGate) {
    kind = Kind::kPod;
    resource = kube::Pods();
  }
  const std::string ns = NamespaceOf(deployment);
  base::Result<json> patched = api_.JsonPatch(resource, ns, action.name, action.patch);
  if (patched.ok()) {
    ++out.writes;
    metrics_.CountWrite(ActionKindName(action.kind));
    recent_.Record(kind, Share(std::move(patched).value()));
    return true;
  }
  if (Stale(patched.status())) {
    log_.Info("patch precondition failed; re-reading",
              {{"action", action.ToString()}, {"error", patched.status().ToString()}});
    Refresh(kind, resource, ns, action.name);
    out.replan = true;
    return false;
  }
  out.status = patched.status();
  return false;
}

bool Executor::OwnerStillNeeds(const std::string& ns, const Action& action, ExecuteOutcome& out) {
  if (action.owner_may_be_active || action.owner_name.empty()) return false;
  base::Result<json> rs = api_.Get(kube::ReplicaSets(), ns, action.owner_name);
  if (!rs.ok()) {
    if (rs.status().not_found()) return false;
    out.status = rs.status();  // unsure: never delete on a guess
    return true;
  }
  const json& o = rs.value();
  if (UidOf(o) != action.owner_uid || IsTerminating(o) || ReplicasOf(o) == 0) return false;
  log_.Info(
      "not deleting PodGroup: its ReplicaSet has replicas again",
      {{"podgroup", action.name}, {"replicaset", action.owner_name}, {"replicas", ReplicasOf(o)}});
  // The cache lags the live object; its event brings the key back, and a
  // short requeue covers a missed one.
  out.requeue_after = std::chrono::milliseconds(1000);
  return true;
}

bool Executor::DeletePodGroup(const json& deployment, const Action& action,
                              const kube::Resource& groups, ExecuteOutcome& out) {
  const std::string ns = NamespaceOf(deployment);
  if (OwnerStillNeeds(ns, action, out)) return false;
  base::Result<json> deleted =
      api_.Delete(groups, ns, action.name, action.uid, action.resource_version);
  if (deleted.ok()) {
    ++out.writes;
    metrics_.CountWrite(ActionKindName(action.kind));
    const json& body = deleted.value();
    const std::string* body_kind = objects::AsString(objects::Member(body, "kind"));
    const bool ours = body_kind != nullptr && *body_kind != "Status" && UidOf(body) == action.uid;
    if (ours && IsTerminating(body)) {
      recent_.Record(Kind::kPodGroup, Share(body));  // still Terminating behind its finalizer
    } else if (ours) {
      // Gone, answered with its final state (custom resources answer so):
      // not a live object, though it reads like one.
      recent_.RecordGone(Kind::kPodGroup, body);
    } else {
      recent_.RecordDeleted(Kind::kPodGroup, ns, action.name, action.uid);  // a Status
    }
    return true;
  }
  if (deleted.status().not_found()) {
    recent_.RecordDeleted(Kind::kPodGroup, ns, action.name, action.uid);
    out.replan = true;
    return false;
  }
  if (deleted.status().conflict()) {
    Refresh(Kind::kPodGroup, groups, ns, action.name);
    out.replan = true;
    return false;
  }
  out.status = deleted.status();
  return false;
}

namespace {

// Why live pod `pod` keeps foreign PodGroup `name` from being released
// (Executor::OnlyOurPodsName): "" when it does not (it names another group,
// has finished, or is a never-run pod gated by wasd of one of `owner_uids`).
std::string Keeps(const json& pod, const std::string& name,
                  const std::vector<std::string>& owner_uids) {
  using objects::AsString;
  using objects::MemberPath;
  if (workloadbuilder::LinkedPodGroupName(pod) != name) return "";
  const std::string* phase = AsString(MemberPath(pod, {"status", "phase"}));
  if (phase != nullptr && (*phase == "Succeeded" || *phase == "Failed")) return "";
  if (!workloadbuilder::WasdPodNeverRan(pod)) {
    return "pod " + NameOf(pod) + ", which is bound or ran,";
  }
  if (std::find(owner_uids.begin(), owner_uids.end(), ControllerUid(pod)) == owner_uids.end()) {
    return "pod " + NameOf(pod) + ", which is not this Deployment's,";
  }
  return "";
}

}  // namespace

bool Executor::OnlyOurPodsName(const json& deployment, const Action& action, ExecuteOutcome& out) {
  const std::string ns = NamespaceOf(deployment);
  base::Result<kube::ListResult> pods = api_.ListPage(kube::Pods(), ns, 0);
  if (!pods.ok()) {
    out.status = pods.status();  // unsure: never release someone else's object on a guess
    return false;
  }
  for (const json& pod : pods.value().items) {
    const std::string keeper = Keeps(pod, action.name, action.owner_uids);
    if (keeper.empty()) continue;
    log_.Info("not releasing a foreign PodGroup: a pod wasd does not hold still names it",
              {{"podgroup", action.name}, {"pod", NameOf(pod)}});
    events_.Record(deployment, "Warning", planner::kReasonPodGroupTerminating,
                   "PodGroup " + action.name +
                       " does not belong to this Deployment and is being deleted, but " + keeper +
                       " still names it (its " +
                       std::string(objects::kPodGroupProtectionFinalizer) +
                       " finalizer waits for every pod that names it); wasd leaves it alone, "
                       "creates no PodGroups and lifts no scheduling gates for this Deployment "
                       "until it is gone");
    // Pods of other owners are not in wasd's caches: nothing would wake us.
    out.requeue_after = planner::kTerminatingRecheck;
    return false;
  }
  return true;
}

bool Executor::ReleasePodGroup(const json& deployment, const Action& action,
                               const kube::Resource& groups, ExecuteOutcome& out) {
  const std::string ns = NamespaceOf(deployment);
  if (action.foreign && !OnlyOurPodsName(deployment, action, out)) return false;
  base::Result<json> patched = api_.JsonPatch(groups, ns, action.name, action.patch);
  if (patched.ok()) {
    ++out.writes;
    metrics_.CountWrite(ActionKindName(action.kind));
    const json& body = patched.value();
    const json* finalizers = objects::MemberPath(body, {"metadata", "finalizers"});
    if (IsTerminating(body) &&
        (finalizers == nullptr || !finalizers->is_array() || finalizers->empty())) {
      // The last finalizer of a deleted object: the server removed it.
      recent_.RecordDeleted(Kind::kPodGroup, ns, action.name, action.uid);
    } else {
      recent_.Record(Kind::kPodGroup, Share(body));
    }
    out.replan = true;
    return true;
  }
  if (Stale(patched.status())) {
    Refresh(Kind::kPodGroup, groups, ns, action.name);
    out.replan = true;
    return false;
  }
  out.status = patched.status();
  return false;
}

ExecuteOutcome Executor::Execute(const json& deployment, const Plan& plan,
                                 const SchedulingApi& scheduling) {
  ExecuteOutcome out;
  const kube::Resource workloads = scheduling.Workloads();
  const kube::Resource groups = GroupResource(plan.backend, scheduling);
  for (const Action& action : plan.actions) {
    if (action.kind == ActionKind::kRequeueAfter) {
      out.requeue_after = action.delay;
      continue;
    }
    if (!may_write_()) {
      out.not_leader = true;
      return out;
    }
    bool go_on = true;
    switch (action.kind) {
      case ActionKind::kEvent:
        events_.Record(deployment, action.event_type, action.reason, action.message);
        break;
      case ActionKind::kCreateWorkload:
      case ActionKind::kCreatePodGroup:
        go_on = Create(deployment, action, workloads, groups, out);
        break;
      case ActionKind::kPatchWorkloadMinCount:
      case ActionKind::kPatchPodGroupMinCount:
      case ActionKind::kPatchPodGroupOwners:
      case ActionKind::kLiftGate: go_on = Patch(deployment, action, workloads, groups, out); break;
      case ActionKind::kDeletePodGroup:
        go_on = DeletePodGroup(deployment, action, groups, out);
        break;
      case ActionKind::kReleasePodGroup:
        go_on = ReleasePodGroup(deployment, action, groups, out);
        break;
      case ActionKind::kRequeueAfter: break;
    }
    if (!go_on) {
      if (!out.status.ok()) {
        log_.Warn("write failed",
                  {{"action", action.ToString()}, {"error", out.status.ToString()}});
      }
      return out;
    }
    if (action.kind != ActionKind::kEvent) log_.Debug("wrote", {{"action", action.ToString()}});
  }
  return out;
}

}  // namespace wasd::reconciler
