// The waits of `wasd migrate --apply` (cmd/migrate_apply.h): the old
// Deployment and what wasd made for it gone, and the in-tree controller
// running the new one, each within --timeout.
#include <algorithm>
#include <cstdio>
#include <thread>

#include "cmd/migrate_apply.h"
#include "kube/resource.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::cmd {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

// Between two reads of a wait: often enough to follow a controller, few
// enough requests to stay unnoticed (5 reads a second, 4 requests each).
constexpr std::chrono::milliseconds kPollInterval{200};
// How long garbage collection gets to remove wasd's objects of a deleted
// Deployment before they are deleted explicitly (kube's collector acts within
// seconds; the wait is also capped at a quarter of --timeout).
constexpr std::chrono::milliseconds kGcGrace{std::chrono::seconds(15)};

}  // namespace

bool Migrator::WaitOldGone(const migrate::Plan& plan, int step, const json& old_deployment,
                           const std::vector<std::string>& old_rs) {
  const auto start = steady_clock::now();
  const auto deadline = start + timeout_;
  const auto explicit_at = start + std::min<std::chrono::milliseconds>(kGcGrace, timeout_ / 4);
  const bool in_place = plan.kind == migrate::PlanKind::kInPlace;
  const std::string after = in_place
                                ? "the new Deployment is not created yet"
                                : Ref(plan, plan.new_name) + " runs under the in-tree controller";
  const std::string create_next =
      in_place ? "; then create the new Deployment from the manifest this command printed on "
                 "stdout (kubectl create -f FILE)"
               : "";
  bool deleted_leftovers = false;
  std::string why = "not checked yet";
  while (true) {
    auto d = client_.Get(kube::Deployments(), plan.ns, plan.name, Options());
    bool gone = false;
    if (d.ok()) {
      if (objects::UidOf(d.value()) != plan.uid) {
        return Failed(plan, step,
                      "another " + Ref(plan, plan.name) + " (uid " + objects::UidOf(d.value()) +
                          ") was created while the old one was being deleted",
                      "the old Deployment is deleted; " + after,
                      "find out who created it; wasd migrate does not touch it");
      }
      why = Ref(plan, plan.name) + " is still Terminating";
    } else if (d.status().not_found()) {
      gone = true;
    } else {
      why = "reading " + Ref(plan, plan.name) + ": " + Why(d.status());
    }
    if (gone) {
      auto owned = OwnedBy(plan.ns, old_deployment, plan.uid, old_rs);
      if (!owned.ok()) {
        why = owned.status().message();
      } else if (owned.value().empty()) {
        Step(plan, step,
             "the old ReplicaSets and wasd's Workload and PodGroups are gone" +
                 std::string(deleted_leftovers ? " (leftovers deleted explicitly)"
                                               : " (garbage collection)"));
        return true;
      } else {
        why = "still there: " + owned.value().Text();
        if (!deleted_leftovers && steady_clock::now() >= explicit_at) {
          deleted_leftovers = true;
          for (const migrate::ObjectRef& r : owned.value().All()) {
            kube::DeleteOptions o;
            o.precondition_uid = r.uid;
            o.request = Options();
            kube::Resource res = kube::ReplicaSets();
            if (r.kind == "Workload") res = kube::Resource(version_, "workloads");
            if (r.kind == "PodGroup") res = kube::Resource(version_, "podgroups");
            if (r.kind == "ReplicaSet") o.propagation_policy = "Background";
            auto del = client_.Delete(res, plan.ns, r.name, o);
            Step(
                plan, step,
                "garbage collection left " + r.Text() + ", deleting it explicitly: " +
                    (del.ok() || del.status().not_found() ? std::string("ok") : Why(del.status())));
          }
        }
      }
    }
    if (steady_clock::now() >= deadline) {
      return Failed(
          plan, step,
          "timed out after " + std::to_string(timeout_.count()) +
              " ms waiting for the old objects to go: " + why,
          (gone ? "the old Deployment is deleted; " : "the old Deployment is Terminating; ") +
              after,
          "wait until they are gone (kubectl get replicasets,workloads,podgroups -n " + plan.ns +
              "; a PodGroup waits for its pods to end)" + create_next);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

bool Migrator::WaitDeploymentGone(const migrate::Plan& plan, int step,
                                  const std::string& save_path) {
  const auto deadline = steady_clock::now() + timeout_;
  std::string why = "not checked yet";
  while (true) {
    auto d = client_.Get(kube::Deployments(), plan.ns, plan.name, Options());
    if (d.status().not_found()) {
      Step(plan, step, Ref(plan, plan.name) + " is gone; the name is free");
      return true;
    }
    if (d.ok() && objects::UidOf(d.value()) != plan.uid) {
      return Failed(plan, step,
                    "another " + Ref(plan, plan.name) + " (uid " + objects::UidOf(d.value()) +
                        ") was created while the old one was being deleted",
                    "the old Deployment is deleted; the new one is not created",
                    "find out who created it; wasd migrate does not touch it");
    }
    why = d.ok() ? Ref(plan, plan.name) +
                       " is still Terminating (its ReplicaSets and pods go "
                       "first: propagationPolicy Foreground)"
                 : "reading " + Ref(plan, plan.name) + ": " + Why(d.status());
    if (steady_clock::now() >= deadline) {
      return Failed(plan, step,
                    "timed out after " + std::to_string(timeout_.count()) + " ms: " + why,
                    "the old Deployment is being deleted; the new one is not created yet; its "
                    "manifest is saved in " +
                        save_path,
                    "once it is gone (a pod may take its terminationGracePeriodSeconds), finish "
                    "with kubectl wasd migrate --resume " +
                        save_path);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void Migrator::CleanLeftovers(const migrate::Plan& plan, int step) {
  auto owned = OwnedBy(plan.ns, plan.manifest, plan.uid, {});
  if (!owned.ok()) {
    Step(plan, step,
         "could not look for wasd's objects of the old Deployment: " + owned.status().message() +
             " (garbage collection removes them)");
    return;
  }
  if (owned.value().empty()) return;
  for (const migrate::ObjectRef& r : owned.value().All()) {
    kube::DeleteOptions o;
    o.precondition_uid = r.uid;
    o.request = Options();
    kube::Resource res = kube::ReplicaSets();
    if (r.kind == "Workload") res = kube::Resource(version_, "workloads");
    if (r.kind == "PodGroup") res = kube::Resource(version_, "podgroups");
    if (r.kind == "ReplicaSet") o.propagation_policy = "Background";
    auto del = client_.Delete(res, plan.ns, r.name, o);
    Step(plan, step,
         "left by the old Deployment: " + r.Text() + ", deleted: " +
             (del.ok() || del.status().not_found() ? std::string("ok") : Why(del.status())));
  }
}

bool Migrator::WaitInTree(const migrate::Plan& plan, int step, const std::string& uid) {
  const auto deadline = steady_clock::now() + timeout_;
  const bool in_place = plan.kind == migrate::PlanKind::kInPlace;
  std::string why = "not checked yet";
  while (true) {
    auto d = client_.Get(kube::Deployments(), plan.ns, plan.new_name, Options());
    if (d.ok() && objects::UidOf(d.value()) != uid) {
      return Failed(plan, step, Ref(plan, plan.new_name) + " was replaced by another object",
                    "unknown: someone else changed it",
                    "look at it: kubectl get deployment " + plan.new_name + " -n " + plan.ns);
    }
    if (d.ok()) {
      auto snapshot = Read(plan.ns, d.value());
      base::Result<migrate::Owned> owned =
          snapshot.ok() ? base::Result<migrate::Owned>(migrate::InTreeOwnedBy(
                              plan.new_name, uid, snapshot.value().replicasets,
                              snapshot.value().workloads, snapshot.value().podgroups))
                        : base::Result<migrate::Owned>(snapshot.status());
      const std::string not_available = migrate::NotAvailableWhy(d.value());
      if (!owned.ok()) {
        why = owned.status().message();
      } else if (owned.value().workloads.empty()) {
        why = "the in-tree controller has not created a Workload for it yet";
      } else if (owned.value().podgroups.empty()) {
        why = "the in-tree controller has not created a PodGroup for its ReplicaSet yet";
      } else if (!not_available.empty()) {
        why = "not Available: " + not_available;
      } else {
        migrate::Owned o = owned.value();
        o.replicasets.clear();
        Step(plan, step,
             Ref(plan, plan.new_name) + " is Available, run by the in-tree controller (" +
                 o.Text() + ")" + (in_place ? "; downtime ends" : ""));
        return true;
      }
    } else if (d.status().not_found()) {
      return Failed(plan, step, Ref(plan, plan.new_name) + " is gone (deleted by someone else)",
                    in_place ? "neither the old nor the new Deployment exists"
                             : Ref(plan, plan.name) + " still runs under wasd",
                    in_place ? "create it from the manifest this command printed on stdout"
                             : "run wasd migrate again");
    } else {
      why = "reading " + Ref(plan, plan.new_name) + ": " + Why(d.status());
    }
    if (steady_clock::now() >= deadline) {
      const std::string waited =
          "timed out after " + std::to_string(timeout_.count()) + " ms: " + why;
      if (in_place) {
        return Failed(plan, step, waited,
                      Ref(plan, plan.name) + " exists with spec.scheduling (uid " + uid +
                          "); wasd's old objects are gone; the hand-over itself is done",
                      "find out why its pods do not run: kubectl describe deployment " + plan.name +
                          " -n " + plan.ns + "; kubectl get workloads,podgroups -n " + plan.ns);
      }
      return Failed(plan, step, waited,
                    "both Deployments exist: " + Ref(plan, plan.name) +
                        " (run by wasd, serving) and " + Ref(plan, plan.new_name) +
                        " (spec.scheduling, not ready); nothing was deleted",
                    "once " + plan.new_name +
                        " is Available delete the old one (kubectl delete "
                        "deployment " +
                        plan.name + " -n " + plan.ns +
                        " --cascade=foreground), or go back by deleting " + plan.new_name);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace wasd::cmd
