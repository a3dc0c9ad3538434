// Reading a Deployment's scheduling configuration (KEP-6276
// `DeploymentSchedulingConfiguration`: schedulingPolicy, schedulingConstraints,
// disruptionMode, resourceClaims) from its two carriers (docs/design.md):
//   1. `spec.scheduling` (clusters whose Deployment schema has the field);
//   2. the annotation `wasd.io/scheduling`, holding the same object as JSON or
//      YAML text.
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
// spec.scheduling.backends), not compared by H5, never copied into a native
// Workload.
inline constexpr std::string_view kBackendsMember = "backends";

enum class Carrier { kNone, kField, kAnnotation, kBoth };

struct SchedulingConfig {
  Carrier carrier = Carrier::kNone;  // which carriers are present on the object
  FieldPath path;                    // the prefix P used in error paths
  nlohmann::json config;             // the parsed object; null when absent or unusable
  FieldErrorList errors;             // carrier errors: unparseable or non-object annotation, H5

  bool present() const { return carrier != Carrier::kNone; }
  // True when a carrier is present and it parsed to a usable object.
  bool usable() const { return present() && config.is_object(); }
};

// Finds and parses the scheduling configuration of `deployment` (any JSON
// value; a non-object yields "not present"). Never throws.
//  - neither carrier: carrier kNone, no errors;
//  - annotation present: its text is parsed as JSON, else as YAML
//    (config_text.h); text over 256 KiB gives TooLong, and a repeated key
//    Duplicate at the key's path below the annotation, e.g.
//    `metadata.annotations[wasd.io/scheduling].schedulingPolicy`; empty
//    text, any other parse failure or a non-object gives Invalid at
//    `metadata.annotations[wasd.io/scheduling]`;
//  - both present and semantically different: H5, Invalid at the annotation
//    path; both equal: the field carrier's path is used. H5 compares the
//    annotation without its `backends` block, which is then added to the
//    field's config (the only place it can come from);
//  - spec.scheduling holding `backends`: Forbidden at
//    spec.scheduling.backends, and the member is left out of `config`.
SchedulingConfig ReadSchedulingConfig(const nlohmann::json& deployment);

// True when either carrier is present (valid or not). Cheaper than
// ReadSchedulingConfig: parses nothing.
bool HasSchedulingCarrier(const nlohmann::json& deployment);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_SCHEDULING_CONFIG_H_
