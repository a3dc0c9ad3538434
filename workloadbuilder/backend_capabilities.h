// What each backend can express of the intent (docs/howto/choose-a-backend.md),
// as data, and the admission checks built on it (docs/design.md Q19):
//
//  - CheckBackendCapabilities: an intent field the chosen backend cannot
//    express is denied with a field error that names the backend and the way
//    forward, never dropped, e.g.
//      metadata.annotations[wasd.io/scheduling].disruptionMode: Forbidden:
//      not supported by backend "coscheduling"; remove it or use backend "native"
//  - ValidateBackendKnobs: the `backends:` block of the annotation (types,
//    ranges, unknown keys).
//
// The same table is printed by `wasd check --capabilities` and is the
// README's "Backends" table.
//
// Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_BACKEND_CAPABILITIES_H_
#define WASD_WORKLOADBUILDER_BACKEND_CAPABILITIES_H_

#include <array>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/field_error.h"
#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

enum class Support {
  kFull,     // ✔ maps directly
  kPartial,  // ◐ maps under a condition (the note says which); denied when it does not hold
  kNone,     // ✘ cannot be expressed: denied
};

// "✔", "◐", "✘".
std::string_view SupportSymbol(Support s);

struct Capability {
  Support support;
  std::string_view note;  // what it compiles to, or why not
};

struct CapabilityRow {
  // The intent field relative to the config, e.g. "disruptionMode",
  // "backends.<backend>.queue" for a backend-only knob.
  std::string_view field;
  std::array<Capability, 4> by_backend;  // indexed like kAllBackends
};

// Every row, in a fixed order.
std::span<const CapabilityRow> CapabilityTable();

const Capability& CapabilityOf(const CapabilityRow& row, Backend backend);

// The intent fields of `config` (a parsed scheduling configuration) that
// `backend` cannot express under `facts`, as Forbidden errors at
// `path`.<field> (path = the carrier's prefix P). Also: a `backends.<b>`
// block for a backend other than `backend` (it would be ignored). Assumes
// the config passed ValidateSchedulingConfig; never throws.
FieldErrorList CheckBackendCapabilities(Backend backend, const nlohmann::json& config,
                                        const FieldPath& path, const ClusterFacts& facts);

// The `backends` block at `path` (e.g. `P.backends`): an object whose
// members are volcano, kai or coscheduling, each an object of that
// backend's knobs — queue (a DNS-1123 subdomain), minResources (resource
// name → quantity), scheduleTimeoutSeconds (1..2147483647). Unknown members
// are Invalid ("unknown field"); a knob of another backend is Forbidden.
FieldErrorList ValidateBackendKnobs(const nlohmann::json& backends, const FieldPath& path);

// The table as text for a terminal: one block per backend (all when
// `only` is null), a line per row: symbol, field, note.
std::string CapabilityTableText(const Backend* only = nullptr);

// The table as Markdown (intent field × backend with ✔/◐/✘ and notes).
std::string CapabilityTableMarkdown();

// Kubernetes resource.Quantity syntax (a number with an optional binary
// (Ki…Ei), decimal (n, u, m, k, M…E) or exponent suffix); non-negative.
bool IsQuantity(std::string_view text);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_BACKEND_CAPABILITIES_H_
