// The hand-over of a Deployment from wasd to the in-tree Deployment
// controller (KEP-6276, feature gate WorkloadWithDeployment): `wasd migrate`.
//
// wasd reads a Deployment's scheduling intent from the annotation
// `wasd.io/scheduling`; the in-tree controller reads the same intent from the
// field `spec.scheduling`. The field cannot be added to a live Deployment
// (it is immutable once the object exists), so a hand-over is a re-creation:
//
//   in place      delete the Deployment (with its ReplicaSets, pods and
//                 wasd's Workload and PodGroups), then create it again under
//                 the same name with spec.scheduling. The Deployment serves
//                 no pods between the two: downtime.
//   side by side  create a second Deployment (another name, the same pod
//                 labels, so the same Service selects both) with
//                 spec.scheduling; once its gang is Available, delete the old
//                 one. No downtime, but room for both gangs at once.
//
// MakePlan turns the stored Deployment into a Plan: the new manifest (the
// annotation translated into spec.scheduling; the annotation, wasd's labels
// and server-set metadata left out), the steps, the downtime statement and
// notes; or a refusal saying why this Deployment cannot be handed over.
//
// Pure functions over JSON values; no I/O. Thread-safe.
#ifndef WASD_MIGRATE_PLAN_H_
#define WASD_MIGRATE_PLAN_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace wasd::migrate {

enum class PlanKind { kInPlace, kSideBySide };

// "in-place" / "side-by-side".
std::string_view PlanKindName(PlanKind kind);
// The inverse; nullopt for anything else.
std::optional<PlanKind> ParsePlanKind(std::string_view name);

// The default name of the side-by-side Deployment: NAME + this suffix.
inline constexpr std::string_view kSideBySideSuffix = "-intree";

// The members of the annotation's configuration that the in-tree field has
// (KEP-6276 DeploymentSchedulingConfiguration).
inline constexpr std::string_view kInTreeMembers[] = {"schedulingPolicy", "schedulingConstraints",
                                                      "disruptionMode", "resourceClaims"};

struct Translation {
  // spec.scheduling: the annotation's object with the in-tree members only
  // (a null member is left out: null equals absent). Null on error.
  nlohmann::json scheduling;
  // What was left out, one sentence each (wasd's `backends` block, members
  // the in-tree type does not have).
  std::vector<std::string> dropped;
  // Non-empty: the annotation cannot be translated (unparseable, not an
  // object, no schedulingPolicy).
  std::string error;
};

// Translates the text of the `wasd.io/scheduling` annotation (JSON or YAML)
// into the value of spec.scheduling. Never throws.
Translation TranslateAnnotation(std::string_view text);

struct PlanOptions {
  PlanKind kind = PlanKind::kInPlace;
  // Side by side: the new Deployment's name; "" = NAME + kSideBySideSuffix.
  std::string new_name;
};

struct Plan {
  // Non-empty: the Deployment cannot be handed over, and why (with what to do
  // instead); the other members are then unset.
  std::string refusal;

  PlanKind kind = PlanKind::kInPlace;
  std::string ns;
  std::string name;      // the Deployment now
  std::string uid;       // its metadata.uid (the delete's precondition)
  std::string new_name;  // the Deployment the in-tree controller will run
  std::int64_t replicas = 1;
  // The Deployment to create (apps/v1), ready for a create call.
  nlohmann::json manifest;
  // What --apply does, in order, one sentence each.
  std::vector<std::string> steps;
  // The downtime, said plainly.
  std::string downtime;
  // What was left out of the manifest, what needs room, what to update
  // afterwards (the source manifest, anything naming the old Deployment).
  std::vector<std::string> notes;

  bool ok() const { return refusal.empty(); }
};

// The plan for `deployment` (a stored apps/v1 Deployment as the API server
// returns it). Refused: not an object or no name; being deleted; no
// annotation wasd.io/scheduling (not managed by wasd); spec.scheduling
// already set (the in-tree controller runs it already); a backend other than
// native (the in-tree controller creates native scheduling.k8s.io objects
// only); an annotation that does not translate; a controller ownerReference
// (its owner would fight the re-creation); a selector that names a wasd.io/
// label (the new pods cannot carry wasd's labels); a pod template that sets
// spec.schedulingGroup; side by side: a new name equal to the old one or not
// a valid Deployment name.
Plan MakePlan(const nlohmann::json& deployment, const PlanOptions& options);

// The plan as YAML comment lines ("# ..."), for the top of the manifest's
// YAML document: so the output can be read and also fed to kubectl.
std::string PlanComment(const Plan& plan);

// The plan as one JSON object: namespace, name, plan, newName, steps,
// downtime, notes, manifest.
nlohmann::json PlanJson(const Plan& plan);

}  // namespace wasd::migrate

#endif  // WASD_MIGRATE_PLAN_H_
