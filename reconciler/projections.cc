#include "reconciler/projections.h"

#include <string>
#include <vector>

#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::reconciler {

namespace {

using Paths = std::vector<std::vector<std::string>>;

std::string S(std::string_view v) { return std::string(v); }

// Every object: its identity and the metadata the caches index on.
//   name, namespace        keys everywhere (planner/object_util.cc NameOf…)
//   uid                    owner checks, PodGroup names (Q12), `test` ops
//   resourceVersion        RecentWrites::Resolve, the Events' involvedObject,
//                          the informer's relist comparison
//   deletionTimestamp      IsTerminating (planner)
//   ownerReferences        ControllerKind/Name/Uid, FindOwnerRef (planner, caches)
Paths Identity() {
  return {{"metadata", "name"},
          {"metadata", "namespace"},
          {"metadata", "uid"},
          {"metadata", "resourceVersion"},
          {"metadata", "deletionTimestamp"}};
}

void Append(Paths& to, const Paths& more) { to.insert(to.end(), more.begin(), more.end()); }

// The pod template members the compile reads (workloadbuilder, planner/plan.cc
// PriorityOptions, the backend contract).
Paths TemplatePaths() {
  return {{"spec", "template", "metadata", "labels"},
          {"spec", "template", "spec", "schedulerName"},
          {"spec", "template", "spec", "priorityClassName"},
          {"spec", "template", "spec", "schedulingGroup"}};
}

// Annotations the reconciler reads; every other one (the last-applied copy
// of the object above all) is dropped.
Paths IntentAnnotations() {
  return {{"metadata", "annotations", S(workloadbuilder::kSchedulingAnnotation)},
          {"metadata", "annotations", S(workloadbuilder::kBackendAnnotation)}};
}

std::shared_ptr<const base::JsonProjection> Make(const Paths& paths) {
  return std::make_shared<const base::JsonProjection>(paths);
}

}  // namespace

std::shared_ptr<const base::JsonProjection> DeploymentProjection() {
  static const auto p = [] {
    Paths paths = Identity();
    Append(paths, {
                      // BuildWorkload: the owner reference's apiVersion and kind.
                      {"apiVersion"},
                      {"kind"},
                      {"metadata", "ownerReferences"},
                      // Selected on (wasd.io/managed) and read (wasd.io/backend).
                      {"metadata", "labels"},
                      // The intent (ReadSchedulingConfig: annotation or spec.scheduling).
                      {"spec", "scheduling"},
                      {"spec", "schedulingGroup"},
                      // The derived minCount and scale to zero.
                      {"spec", "replicas"},
                      // The gang doctor (gang_status.cc): the GangScheduled
                      // condition it compares with (zero writes when equal)
                      // and its lastTransitionTime; the other conditions are
                      // kept too (the patch's index of the entry it replaces).
                      {"status", "conditions"},
                  });
    Append(paths, IntentAnnotations());
    Append(paths, TemplatePaths());
    return Make(paths);
  }();
  return p;
}

std::shared_ptr<const base::JsonProjection> ReplicaSetProjection() {
  static const auto p = [] {
    Paths paths = Identity();
    Append(paths, {
                      // BuildPodGroup: the owner reference's apiVersion.
                      {"apiVersion"},
                      {"kind"},
                      {"metadata", "ownerReferences"},
                      {"metadata", "labels"},
                      // PodGroup minCount and scale to zero (ReplicasOf).
                      {"spec", "replicas"},
                      // The gang doctor: the current ReplicaSet (highest
                      // revision, then newest) and one member's requests and
                      // placement rules for the fit preview (doctor/fit.cc).
                      {"metadata", "creationTimestamp"},
                      {"metadata", "annotations", "deployment.kubernetes.io/revision"},
                      {"spec", "template", "spec", "containers", "resources", "requests"},
                      {"spec", "template", "spec", "initContainers", "resources", "requests"},
                      {"spec", "template", "spec", "overhead"},
                      {"spec", "template", "spec", "nodeSelector"},
                      {"spec", "template", "spec", "tolerations"},
                  });
    Append(paths, IntentAnnotations());
    Append(paths, TemplatePaths());
    return Make(paths);
  }();
  return p;
}

std::shared_ptr<const base::JsonProjection> PodProjection() {
  static const auto p = [] {
    Paths paths = Identity();
    Append(paths, {
                      // Only the controller reference's kind, name, uid and flag
                      // (ControllerKind/Name/Uid; the gate is lifted on the pod,
                      // its owners are never written).
                      {"metadata", "ownerReferences", "kind"},
                      {"metadata", "ownerReferences", "name"},
                      {"metadata", "ownerReferences", "uid"},
                      {"metadata", "ownerReferences", "controller"},
                      // The oldest gated pod's age (metrics: CountGatedPods).
                      {"metadata", "creationTimestamp"},
                      // The labels and annotations that link a pod to a group
                      // (wasd, the backends' PodGroups) or select it.
                      {"metadata", "labels", S(workloadbuilder::kManagedLabel)},
                      {"metadata", "labels", S(workloadbuilder::kBackendLabel)},
                      {"metadata", "labels", S(workloadbuilder::kPodTemplateHashLabel)},
                      {"metadata", "labels", S(workloadbuilder::kCoschedulingGroupLabel)},
                      {"metadata", "annotations", S(workloadbuilder::kVolcanoGroupAnnotation)},
                      {"metadata", "annotations", S(workloadbuilder::kKaiGroupAnnotation)},
                      {"metadata", "annotations", S(workloadbuilder::kBackendAnnotation)},
                      // GateIndex and the gate-lift patch's `test` of the gate.
                      {"spec", "schedulingGates"},
                      // The PodGroup the pod names (plan_podgroups.cc, caches).
                      {"spec", "schedulingGroup"},
                      // Bound pods are never gated again (plan_podgroups.cc).
                      {"spec", "nodeName"},
                      {"spec", "schedulerName"},
                      // Finished pods release their PodGroup (plan_podgroups.cc).
                      {"status", "phase"},
                      // The gang doctor: PodScheduled False/Unschedulable and
                      // its message (what the scheduler said), the timeline —
                      // the only condition it reads (doctor/diagnosis.cc); a
                      // running pod's other four would triple the cached pod.
                      {"status", "conditions[type=PodScheduled]"},
                      {"status", "startTime"},
                  });
    return Make(paths);
  }();
  return p;
}

std::shared_ptr<const base::JsonProjection> SchedulingObjectProjection() {
  static const auto p = [] {
    Paths paths = Identity();
    Append(paths, {
                      {"apiVersion"},
                      {"kind"},
                      {"metadata", "ownerReferences"},
                      {"metadata", "labels"},
                      {"metadata", "annotations"},
                      // PodGroups' protection finalizer (plan_podgroups.cc).
                      {"metadata", "finalizers"},
                      // The backend's verdict (the gang doctor: reconciler/gang_status.cc).
                      {"status"},
                      // Compared with the desired spec (minCount, templates,
                      // workloadRef, claims).
                      {"spec"},
                  });
    return Make(paths);
  }();
  return p;
}

std::shared_ptr<const base::JsonProjection> NodeProjection() {
  static const auto p = [] {
    Paths paths = Identity();
    Append(paths, {
                      // The fit preview (doctor/fit.cc): topology domain and
                      // nodeSelector, taints, cordon, free capacity.
                      {"metadata", "labels"},
                      {"spec", "taints"},
                      {"spec", "unschedulable"},
                      {"status", "allocatable"},
                  });
    return Make(paths);
  }();
  return p;
}

std::shared_ptr<const base::JsonProjection> BoundPodProjection() {
  static const auto p = [] {
    Paths paths = Identity();
    Append(paths, {
                      // The fit preview: what each bound pod takes from its node
                      // (PodRequests: containers, init containers, overhead).
                      {"spec", "nodeName"},
                      {"spec", "containers", "resources", "requests"},
                      {"spec", "initContainers", "resources", "requests"},
                      {"spec", "overhead"},
                      {"status", "phase"},
                  });
    return Make(paths);
  }();
  return p;
}

}  // namespace wasd::reconciler
