// Rendering JSON values as YAML block text for human-facing output
// (`wasd check -o yaml`). Strings that YAML would read as another type
// ("true", "3", "null", "") are quoted. Pure; thread-safe.
#ifndef WASD_CHECK_YAML_OUTPUT_H_
#define WASD_CHECK_YAML_OUTPUT_H_

#include <string>

#include <nlohmann/json.hpp>

namespace wasd::check {

// One YAML document (no leading "---"), ending with a newline.
std::string ToYaml(const nlohmann::json& value);

}  // namespace wasd::check

#endif  // WASD_CHECK_YAML_OUTPUT_H_
