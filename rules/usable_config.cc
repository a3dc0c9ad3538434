// CheckSchedulingConfig: carrier errors plus S2–S17/B1 (see usable_config.h).
#include "rules/usable_config.h"

#include "workloadbuilder/validate.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

ConfigVerdict CheckSchedulingConfig(const wb::SchedulingConfig& config,
                                    const nlohmann::json* old_config) {
  ConfigVerdict verdict;
  if (!config.present()) return verdict;
  verdict.errors = config.errors;
  if (config.usable()) {
    // Only the annotation needs S17: the API server has already decoded
    // spec.scheduling against its schema.
    const bool strict = config.carrier == wb::Carrier::kAnnotation;
    wb::Append(verdict.errors,
               wb::ValidateSchedulingConfig(config.config, config.path, strict, old_config));
  }
  verdict.usable = config.usable() && verdict.errors.empty();
  return verdict;
}

}  // namespace wasd::rules
