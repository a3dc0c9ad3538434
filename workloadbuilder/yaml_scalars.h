// How a YAML scalar becomes a JSON value, the way a Kubernetes client reads
// YAML (sigs.k8s.io/yaml, YAML 1.2 core schema): quoted scalars stay strings;
// plain `true`/`false` (and True/TRUE, False/FALSE) become booleans; plain
// decimal, 0x hex and 0o octal integers become integers; plain floats become
// numbers; `null`/`~`/empty become null; explicit `!!str`, `!!int`,
// `!!float`, `!!bool`, `!!null` tags are honoured; any other tag is refused.
//
// Internal to workloadbuilder/. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_YAML_SCALARS_H_
#define WASD_WORKLOADBUILDER_YAML_SCALARS_H_

#include <nlohmann/json.hpp>
#include <string>

namespace wasd::workloadbuilder {

// Converts the scalar `text` carrying yaml-cpp's `tag` ("?" plain, "!"
// quoted, or a resolved tag such as "tag:yaml.org,2002:int") into `out`.
// Returns "" on success, else the reason (one line, excerpt of the text).
std::string ResolveYamlScalar(const std::string& tag, const std::string& text, nlohmann::json& out);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_YAML_SCALARS_H_
