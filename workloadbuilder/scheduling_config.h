// Reading a Deployment's scheduling configuration (KEP-6276
// `DeploymentSchedulingConfiguration`: schedulingPolicy, schedulingConstraints,
// disruptionMode, resourceClaims).
//
// wasd has ONE carrier: the annotation `wasd.io/scheduling`, holding that
// object as JSON or YAML text (docs/design.md Q1, Q22). The Deployment field
// `spec.scheduling` is kube-controller-manager's (the in-tree Workload
// integration, feature gate WorkloadWithDeployment), never wasd's: a
// Deployment that has it is managed in-tree. It is read here only so that
// `wasd check` and the webhook's warnings can judge it by the KEP's rules
// (ReadInTreeSchedulingConfig); nothing of wasd is built from it.
//
// Pure functions over JSON values; no I/O. Thread-safe.
#ifndef WASD_WORKLOADBUILDER_SCHEDULING_CONFIG_H_
#define WASD_WORKLOADBUILDER_SCHEDULING_CONFIG_H_

#include <string_view>

#include <nlohmann/json.hpp>

#include "workloadbuilder/field_error.h"
#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

// Names that are part of wasd's contract (docs/design.md).
inline constexpr std::string_view kSchedulingAnnotation = "wasd.io/scheduling";
inline constexpr std::string_view kManagedLabel = "wasd.io/managed";
inline constexpr std::string_view kPodGroupGate = "wasd.io/pod-group";
inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";

// The member of the annotation's object that holds backend-only knobs
// (`backends: {volcano: {queue: ...}}`, backend_compile.h). Not part of the
// KEP's type: refused in spec.scheduling (Forbidden at
// spec.scheduling.backends), never copied into a native Workload.
inline constexpr std::string_view kBackendsMember = "backends";

// kField only from ReadInTreeSchedulingConfig.
enum class Carrier { kNone, kField, kAnnotation };

struct SchedulingConfig {
  Carrier carrier = Carrier::kNone;  // which carriers are present on the object
  FieldPath path;                    // the prefix P used in error paths
  nlohmann::json config;             // the parsed object; null when absent or unusable
  FieldErrorList errors;             // carrier errors: unparseable or non-object annotation, H5

  bool present() const { return carrier != Carrier::kNone; }
  // True when a carrier is present and it parsed to a usable object.
  bool usable() const { return present() && config.is_object(); }
};

// Finds and parses wasd's scheduling configuration of `deployment`: the
// annotation (any JSON value; a non-object yields "not present"; spec.scheduling
// is not looked at). Never throws.
//  - no annotation: carrier kNone, no errors;
//  - annotation present: its text is parsed as JSON, else as YAML
//    (config_text.h); text over 256 KiB gives TooLong, and a repeated key
//    Duplicate at the key's path below the annotation, e.g.
//    `metadata.annotations[wasd.io/scheduling].schedulingPolicy`; empty
//    text, any other parse failure or a non-object gives Invalid at
//    `metadata.annotations[wasd.io/scheduling]`.
SchedulingConfig ReadSchedulingConfig(const nlohmann::json& deployment);

// True when the annotation wasd.io/scheduling is present (valid or not).
// Cheaper than ReadSchedulingConfig: parses nothing.
bool HasSchedulingCarrier(const nlohmann::json& deployment);

// The in-tree integration's configuration, `spec.scheduling` (carrier
// kField, path `spec.scheduling`), for judging it by the KEP's rules only.
// A non-object gives Invalid at spec.scheduling; a `backends` member (wasd's
// annotation-only block) gives Forbidden at spec.scheduling.backends and is
// left out of `config`.
SchedulingConfig ReadInTreeSchedulingConfig(const nlohmann::json& deployment);

// True when `spec.scheduling` is present and not null. kube-apiserver drops
// the field in its create/update strategy when WorkloadWithDeployment is off
// (after mutating admission, before validating admission and storage), so in
// a validating review or a stored object it means the in-tree integration
// manages the Deployment; in a mutating review it means nothing yet.
bool HasInTreeScheduling(const nlohmann::json& deployment);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_SCHEDULING_CONFIG_H_
