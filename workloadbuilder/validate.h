// Structural validation of a scheduling configuration: rules S2–S17 and B1 of
// docs/api.md §b.1/§b.4. Every error found is returned; children of a broken
// parent are not checked. Order follows declaration order (policy,
// constraints, disruptionMode, resourceClaims).
//
// Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_VALIDATE_H_
#define WASD_WORKLOADBUILDER_VALIDATE_H_

#include <nlohmann/json.hpp>

#include "workloadbuilder/field_error.h"
#include "workloadbuilder/field_path.h"

namespace wasd::workloadbuilder {

// `config` is the carrier's value, `path` the prefix P. `strict` turns on S17
// (unknown members, wrong JSON types), which only the annotation carrier needs:
// the API server has already checked the field carrier's schema.
// `old_config` (UPDATE: the stored object's config, else null): a union
// (S2/S3, S8/S9, S14/S15) is re-checked only when its set members differ from
// the same union's in `old_config` (docs/api.md §b.0).
FieldErrorList ValidateSchedulingConfig(const nlohmann::json& config, const FieldPath& path,
                                        bool strict, const nlohmann::json* old_config = nullptr);

// Format checks with Kubernetes' messages (docs/api.md §b.0). Each returns the
// detail messages (empty when valid); callers wrap each in Invalid(path, value, msg).
std::vector<std::string> IsDNS1123Label(std::string_view value);
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);
std::vector<std::string> IsQualifiedName(std::string_view value);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_VALIDATE_H_
