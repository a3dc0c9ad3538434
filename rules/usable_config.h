// Is a stored scheduling configuration usable and valid? The one answer to
// that question, shared by the webhook's CREATE rules (CreateRules) and the
// reconciler's planner, so the two cannot drift (review V6).
//
// A configuration is usable when a carrier is present, it parsed to a JSON
// object, and neither the carrier (an unparseable annotation) nor the
// structural rules S2–S17/B1 report an error. S17 (strict decoding) applies
// to the annotation alone: the API server has already decoded spec.scheduling
// (judged here only for the in-tree integration, docs/design.md Q22) against its
// schema.
//
// Pure; thread-safe.
#ifndef WASD_RULES_USABLE_CONFIG_H_
#define WASD_RULES_USABLE_CONFIG_H_

#include <nlohmann/json.hpp>

#include "workloadbuilder/field_error.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::rules {

struct ConfigVerdict {
  // The carrier's errors, then those of the parsed configuration; empty
  // when there is no carrier.
  workloadbuilder::FieldErrorList errors;
  // Present, parsed to an object, and no errors: wasd may build from it.
  bool usable = false;
};

// The verdict on `config` (from ReadSchedulingConfig). `old_config` (UPDATE:
// the stored object's parsed configuration, or null) ratchets the unions of
// the configuration, as ValidateSchedulingConfig describes. Never fails.
ConfigVerdict CheckSchedulingConfig(const workloadbuilder::SchedulingConfig& config,
                                    const nlohmann::json* old_config = nullptr);

}  // namespace wasd::rules

#endif  // WASD_RULES_USABLE_CONFIG_H_
