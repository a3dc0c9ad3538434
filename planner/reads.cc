#include "planner/reads.h"

#include <string>

#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::planner {

namespace {

using base::JsonPaths;

std::string S(std::string_view v) { return std::string(v); }

// Every object: its name and namespace (the keys, NameOf…), uid (owner
// checks, PodGroup names, `test` ops) and deletionTimestamp (IsTerminating).
JsonPaths Identity() {
  return {{"metadata", "name"},
          {"metadata", "namespace"},
          {"metadata", "uid"},
          {"metadata", "deletionTimestamp"}};
}

// The pod template members the compile reads (workloadbuilder, plan.cc
// PriorityOptions, the backend contract).
JsonPaths TemplatePaths() {
  return {{"spec", "template", "metadata", "labels"},
          {"spec", "template", "spec", "schedulerName"},
          {"spec", "template", "spec", "priorityClassName"},
          {"spec", "template", "spec", "schedulingGroup"}};
}

// Annotations the planner reads; every other one (the last-applied copy
// of the object above all) is dropped.
JsonPaths IntentAnnotations() {
  return {{"metadata", "annotations", S(workloadbuilder::kSchedulingAnnotation)},
          {"metadata", "annotations", S(workloadbuilder::kBackendAnnotation)}};
}

JsonPaths With(JsonPaths paths, const JsonPaths& more) {
  base::AppendPaths(&paths, more);
  return paths;
}

}  // namespace

JsonPaths DeploymentReads() {
  JsonPaths paths =
      With(Identity(), {
                           // BuildWorkload: the owner reference's apiVersion and kind.
                           {"apiVersion"},
                           {"kind"},
                           {"metadata", "ownerReferences"},
                           // wasd.io/backend.
                           {"metadata", "labels"},
                           // The intent (ReadSchedulingConfig: annotation or
                           // spec.scheduling).
                           {"spec", "scheduling"},
                           {"spec", "schedulingGroup"},
                           // The derived minCount and scale to zero.
                           {"spec", "replicas"},
                       });
  base::AppendPaths(&paths, IntentAnnotations());
  base::AppendPaths(&paths, TemplatePaths());
  return paths;
}

JsonPaths ReplicaSetReads() {
  JsonPaths paths = With(Identity(), {
                                         // BuildPodGroup: the owner reference's apiVersion.
                                         {"apiVersion"},
                                         {"kind"},
                                         {"metadata", "ownerReferences"},
                                         {"metadata", "labels"},
                                         // PodGroup minCount and scale to zero (ReplicasOf).
                                         {"spec", "replicas"},
                                     });
  base::AppendPaths(&paths, IntentAnnotations());
  base::AppendPaths(&paths, TemplatePaths());
  return paths;
}

JsonPaths PodReads() {
  return With(Identity(),
              {
                  // Only the controller reference's kind, name, uid and flag
                  // (ControllerKind/Name/Uid; the gate is lifted on the pod,
                  // its owners are never written).
                  {"metadata", "ownerReferences", "kind"},
                  {"metadata", "ownerReferences", "name"},
                  {"metadata", "ownerReferences", "uid"},
                  {"metadata", "ownerReferences", "controller"},
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
                  // The PodGroup the pod names (plan_podgroups.cc).
                  {"spec", "schedulingGroup"},
                  // Bound pods are never gated again (plan_podgroups.cc).
                  {"spec", "nodeName"},
                  {"spec", "schedulerName"},
                  // Finished pods release their PodGroup (plan_podgroups.cc).
                  {"status", "phase"},
                  // Never scheduled (objects::NeverScheduled): PodScheduled.
                  {"status", "conditions", "type"},
                  {"status", "conditions", "status"},
              });
}

JsonPaths SchedulingObjectReads() {
  return With(Identity(), {
                              {"apiVersion"},
                              {"kind"},
                              {"metadata", "ownerReferences"},
                              {"metadata", "labels"},
                              {"metadata", "annotations"},
                              // PodGroups' protection finalizer (plan_podgroups.cc).
                              {"metadata", "finalizers"},
                              // Compared with the desired spec (minCount, templates,
                              // workloadRef, claims).
                              {"spec"},
                          });
}

}  // namespace wasd::planner
