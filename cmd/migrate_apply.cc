#include "cmd/migrate_apply.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "check/manifest_reader.h"
#include "check/yaml_output.h"
#include "kube/resource.h"
#include "migrate/saved.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "runtime/file_util.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::cmd {
namespace {

using nlohmann::json;
using objects::MemberPath;

// "app=web,tier=x" from spec.selector.matchLabels; "" when the selector has
// expressions too (then every ReplicaSet of the namespace is read, and
// ownership decides).
std::string Selector(const json& deployment) {
  const json* sel = MemberPath(deployment, {"spec", "selector"});
  if (sel == nullptr || !sel->is_object()) return "";
  if (const json* me = objects::Member(*sel, "matchExpressions");
      me != nullptr && me->is_array() && !me->empty()) {
    return "";
  }
  std::string out;
  const json* labels = objects::Member(*sel, "matchLabels");
  if (labels == nullptr || !labels->is_object()) return "";
  for (const auto& [k, v] : labels->items()) {
    if (v.is_string()) out += (out.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  }
  return out;
}

}  // namespace

std::string Ref(const migrate::Plan& p, const std::string& name) {
  return "deployment " + p.ns + "/" + name;
}

kube::RequestOptions Migrator::Options() const {
  kube::RequestOptions o;
  o.timeout = request_timeout_;
  return o;
}

base::Status Migrator::DiscoverSchedulingVersion(const std::string& ns) {
  for (const char* v : {"scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1"}) {
    kube::ListOptions o;
    o.limit = 1;
    o.request = Options();
    auto r = client_.ListPage(kube::Resource(v, "workloads"), ns, o);
    if (r.ok()) {
      version_ = v;
      return base::Status();
    }
    if (!r.status().not_found()) {
      return base::Status::Error("reading workloads." + std::string(v) + ": " + Why(r.status()));
    }
  }
  return base::Status::Error(
      "the API server serves no Workloads (scheduling.k8s.io v1 or v1beta1): the in-tree "
      "Deployment controller needs the Workload API (feature gate GenericWorkload) before it can "
      "take a Deployment over");
}

base::Result<Migrator::Snapshot> Migrator::Read(const std::string& ns, const json& deployment) {
  Snapshot s;
  kube::ListOptions o;
  o.request = Options();
  o.label_selector = Selector(deployment);
  auto rss = client_.List(kube::ReplicaSets(), ns, o);
  if (!rss.ok())
    return base::Status::Error("listing replicasets in " + ns + ": " + Why(rss.status()));
  s.replicasets = std::move(rss.value().items);
  o.label_selector.clear();
  auto wls = client_.List(kube::Resource(version_, "workloads"), ns, o);
  if (!wls.ok())
    return base::Status::Error("listing workloads in " + ns + ": " + Why(wls.status()));
  s.workloads = std::move(wls.value().items);
  auto pgs = client_.List(kube::Resource(version_, "podgroups"), ns, o);
  if (!pgs.ok())
    return base::Status::Error("listing podgroups in " + ns + ": " + Why(pgs.status()));
  s.podgroups = std::move(pgs.value().items);
  return s;
}

base::Result<migrate::Owned> Migrator::OwnedBy(const std::string& ns, const json& deployment,
                                               const std::string& uid,
                                               const std::vector<std::string>& known_rs) {
  auto s = Read(ns, deployment);
  if (!s.ok()) return s.status();
  return migrate::OwnedBy(uid, known_rs, s.value().replicasets, s.value().workloads,
                          s.value().podgroups);
}

std::string Migrator::Check(const migrate::Plan& plan) {
  json m = plan.manifest;
  if (plan.kind == migrate::PlanKind::kSideBySide) {
    auto existing = client_.Get(kube::Deployments(), plan.ns, plan.new_name, Options());
    if (existing.ok()) {
      return Ref(plan, plan.new_name) + " already exists; choose another name with --new-name";
    }
    if (!existing.status().not_found()) {
      return "reading " + Ref(plan, plan.new_name) + ": " + Why(existing.status());
    }
  } else {
    // The name is taken (by the Deployment itself): the dry run asks the
    // server for a generated one.
    m["metadata"].erase("name");
    m["metadata"]["generateName"] = plan.name + "-";
  }
  kube::RequestOptions o = Options();
  o.dry_run = true;
  auto r = client_.Create(kube::Deployments(), plan.ns, m, o);
  if (!r.ok()) {
    return "the API server refused a dry-run create of the new Deployment (nothing was "
           "changed): " +
           Why(r.status());
  }
  const json* kept = MemberPath(r.value(), {"spec", "scheduling"});
  if (kept == nullptr || !kept->is_object()) {
    return "the API server dropped spec.scheduling from a dry-run create of the new Deployment: "
           "the in-tree Deployment integration is off on this cluster (feature gate "
           "WorkloadWithDeployment, alpha, off by default; kube-apiserver and "
           "kube-controller-manager both need --feature-gates=WorkloadWithDeployment=true, "
           "with GenericWorkload on). Nothing was changed: keep this Deployment on wasd until "
           "the gate is on";
  }
  return "";
}

void Migrator::Step(const migrate::Plan& plan, int step, const std::string& what) const {
  std::fprintf(stderr, "%s: step %d/%zu: %s\n", Ref(plan, plan.name).c_str(), step,
               plan.steps.size(), what.c_str());
  std::fflush(stderr);
}

bool Migrator::Failed(const migrate::Plan& plan, int step, const std::string& what,
                      const std::string& state, const std::string& next) const {
  std::fprintf(stderr, "error: %s: step %d/%zu failed: %s\nState: %s\nNext: %s\n",
               Ref(plan, plan.name).c_str(), step, plan.steps.size(), what.c_str(), state.c_str(),
               next.c_str());
  std::fflush(stderr);
  return false;
}

bool Migrator::Apply(const migrate::Plan& plan, const std::string& save_path) {
  const std::string text = migrate::SavedHeader(plan, save_path) + check::ToYaml(plan.manifest);
  if (base::Status saved = runtime::WriteFileAtomic(save_path, text, 0600); !saved.ok()) {
    return Failed(plan, 1, "cannot save the new manifest to " + save_path + ": " + saved.message(),
                  "nothing changed",
                  "choose a writable place with --save-manifest PATH and run it again");
  }
  std::fprintf(stderr,
               "%s: the new manifest is saved in %s; if this stops half way, finish with "
               "kubectl wasd migrate --resume %s\n",
               Ref(plan, plan.name).c_str(), save_path.c_str(), save_path.c_str());
  std::fflush(stderr);
  Step(plan, 1,
       "the API server keeps spec.scheduling (server-side dry run); Workloads served as " +
           version_);
  return plan.kind == migrate::PlanKind::kInPlace ? InPlace(plan, save_path) : SideBySide(plan);
}

bool Migrator::InPlace(const migrate::Plan& plan, const std::string& save_path) {
  auto owned = OwnedBy(plan.ns, plan.manifest, plan.uid, {});
  if (!owned.ok()) {
    return Failed(plan, 2, owned.status().message(), "nothing changed",
                  "fix the cause and run wasd migrate again");
  }
  Step(plan, 2, "its objects now: " + owned.value().Text());
  if (!Delete(plan, 2)) return false;
  if (!WaitDeploymentGone(plan, 3, save_path)) return false;
  return CreateAndWait(plan, save_path);
}

bool Migrator::CreateAndWait(const migrate::Plan& plan, const std::string& save_path) {
  std::string uid;
  if (!Create(plan, 4, &uid, save_path)) return false;
  CleanLeftovers(plan, 4);
  return WaitInTree(plan, 5, uid);
}

bool Migrator::Resume(const std::string& path) {
  const auto fail = [&path](const std::string& why) {
    std::fprintf(stderr, "error: cannot resume from %s: %s\n", path.c_str(), why.c_str());
    return false;
  };
  base::Result<std::string> text = runtime::ReadSmallFile(path, check::kMaxManifestBytes);
  if (!text.ok()) return fail(text.status().message());
  base::Result<migrate::SavedState> state = migrate::ReadSavedState(text.value());
  if (!state.ok()) return fail(state.status().message());
  const migrate::SavedState& st = state.value();
  if (st.kind != migrate::PlanKind::kInPlace) {
    return fail(
        "it is a side-by-side plan, which never leaves the Deployment missing: run wasd "
        "migrate deployment/" +
        st.name + " --plan side-by-side --apply again");
  }
  check::ManifestReadResult read = check::ParseManifests(text.value(), path);
  if (!read.error.empty()) return fail(read.error);
  if (read.manifests.size() != 1 ||
      objects::AsString(objects::Member(read.manifests[0].object, "kind")) == nullptr ||
      *objects::AsString(objects::Member(read.manifests[0].object, "kind")) != "Deployment") {
    return fail("it must hold exactly one Deployment");
  }
  migrate::Plan plan;
  plan.kind = st.kind;
  plan.ns = st.ns;
  plan.name = st.name;
  plan.uid = st.uid;
  plan.new_name = st.new_name;
  plan.manifest = read.manifests[0].object;
  plan.steps.resize(5);
  if (base::Status served = DiscoverSchedulingVersion(plan.ns); !served.ok()) {
    return fail(served.message());
  }
  auto current = client_.Get(kube::Deployments(), plan.ns, plan.name, Options());
  if (!current.ok() && !current.status().not_found()) {
    return fail("reading " + Ref(plan, plan.name) + ": " + Why(current.status()));
  }
  const json* now = current.ok() ? &current.value() : nullptr;
  switch (migrate::DecideResume(st, now)) {
    case migrate::ResumeFrom::kDelete:
      Step(plan, 2,
           Ref(plan, plan.name) + " (uid " + plan.uid + ") is still there: running the whole plan");
      return InPlace(plan, path);
    case migrate::ResumeFrom::kWaitGone:
      Step(plan, 3, Ref(plan, plan.name) + " is being deleted: waiting for it");
      return WaitDeploymentGone(plan, 3, path) && CreateAndWait(plan, path);
    case migrate::ResumeFrom::kCreate:
      Step(plan, 3, Ref(plan, plan.name) + " is gone: creating it from " + path);
      return CreateAndWait(plan, path);
    case migrate::ResumeFrom::kWaitInTree:
      Step(plan, 4,
           Ref(plan, plan.name) + " exists with spec.scheduling (uid " + objects::UidOf(*now) +
               "): waiting for the in-tree controller");
      CleanLeftovers(plan, 4);
      return WaitInTree(plan, 5, objects::UidOf(*now));
    case migrate::ResumeFrom::kConflict: break;
  }
  return fail("another " + Ref(plan, plan.name) + " (uid " + objects::UidOf(*now) +
              ") without spec.scheduling has the name; wasd migrate does not touch it");
}

bool Migrator::SideBySide(const migrate::Plan& plan) {
  auto owned = OwnedBy(plan.ns, plan.manifest, plan.uid, {});
  if (!owned.ok()) {
    return Failed(plan, 2, owned.status().message(), "nothing changed",
                  "fix the cause and run wasd migrate again");
  }
  std::vector<std::string> old_rs;
  for (const migrate::ObjectRef& r : owned.value().replicasets) old_rs.push_back(r.uid);
  std::string uid;
  if (!Create(plan, 2, &uid)) return false;
  if (!WaitInTree(plan, 3, uid)) return false;
  Step(plan, 4, "objects of " + Ref(plan, plan.name) + " now: " + owned.value().Text());
  if (!Delete(plan, 4)) return false;
  return WaitOldGone(plan, 5, plan.manifest, old_rs);
}

bool Migrator::Delete(const migrate::Plan& plan, int step) {
  kube::DeleteOptions o;
  o.precondition_uid = plan.uid;
  o.propagation_policy = "Foreground";
  o.request = Options();
  auto r = client_.Delete(kube::Deployments(), plan.ns, plan.name, o);
  const bool in_place = plan.kind == migrate::PlanKind::kInPlace;
  const std::string before =
      in_place ? "nothing changed"
               : Ref(plan, plan.new_name) + " runs under the in-tree controller and " +
                     Ref(plan, plan.name) + " still runs under wasd (both behind the Service)";
  if (!r.ok()) {
    if (r.status().not_found() || r.status().conflict()) {
      return Failed(
          plan, step,
          Ref(plan, plan.name) + " (uid " + plan.uid +
              ") is gone or was replaced since the plan was made: " + r.status().message(),
          before,
          "look at it (kubectl get deployment " + plan.name + " -n " + plan.ns +
              ") and run wasd migrate again if it still needs it");
    }
    return Failed(plan, step, "deleting " + Ref(plan, plan.name) + ": " + Why(r.status()), before,
                  "fix the cause and run wasd migrate again" +
                      std::string(in_place ? "" : " (delete the old Deployment by hand)"));
  }
  Step(plan, step,
       "deleted " + Ref(plan, plan.name) + " (propagationPolicy Foreground)" +
           (in_place ? "; downtime starts" : ""));
  return true;
}

bool Migrator::Create(const migrate::Plan& plan, int step, std::string* uid,
                      const std::string& save_path) {
  const bool in_place = plan.kind == migrate::PlanKind::kInPlace;
  const std::string before =
      in_place ? Ref(plan, plan.name) + " does not exist (deleted in step 2)"
               : "nothing changed: " + Ref(plan, plan.name) + " still runs under wasd";
  const std::string next = in_place
                               ? "fix the cause, then finish with kubectl wasd migrate --resume " +
                                     save_path + " (or kubectl create -f " + save_path + ")"
                               : "fix the cause and run wasd migrate again";
  auto r = client_.Create(kube::Deployments(), plan.ns, plan.manifest, Options());
  if (!r.ok()) {
    return Failed(plan, step, "creating " + Ref(plan, plan.new_name) + ": " + Why(r.status()),
                  before, next);
  }
  *uid = objects::UidOf(r.value());
  const json* kept = MemberPath(r.value(), {"spec", "scheduling"});
  if (kept == nullptr || !kept->is_object()) {
    return Failed(
        plan, step,
        "the API server created " + Ref(plan, plan.new_name) +
            " without spec.scheduling (it dropped the field, although the dry run kept it)",
        Ref(plan, plan.new_name) +
            " exists and runs without gang scheduling; no controller makes its Workload or "
            "PodGroups" +
            (in_place ? "" : "; " + Ref(plan, plan.name) + " still runs under wasd"),
        "check the API server's feature gates, then delete " + Ref(plan, plan.new_name) +
            (in_place ? " and create it again from the printed manifest, or put the annotation "
                        "wasd.io/scheduling back to run it with wasd"
                      : ""));
  }
  Step(plan, step,
       "created " + Ref(plan, plan.new_name) + " (uid " + *uid + ") with spec.scheduling");
  // The manifest carries none of wasd's labels: a marker on the stored
  // object was added by a wasd webhook that does not stand down for
  // spec.scheduling (a release before the in-tree integration).
  if (MemberPath(r.value(), {"spec", "template", "metadata", "labels",
                             workloadbuilder::kManagedLabel}) != nullptr) {
    std::fprintf(stderr,
                 "warning: %s: wasd's webhook marked it (label %s) although it carries "
                 "spec.scheduling: this wasd does not stand down for the in-tree controller and "
                 "manages the Deployment too; upgrade wasd\n",
                 Ref(plan, plan.new_name).c_str(),
                 std::string(workloadbuilder::kManagedLabel).c_str());
  }
  return true;
}

}  // namespace wasd::cmd
