// Shared helpers of the rules unit tests: a base Deployment (tests/testdata/
// rules/deployment-base.json: 3 replicas, Recreate, no carrier) and ways to
// put a scheduling configuration on it through either carrier.
#ifndef WASD_TESTS_RULES_RULES_FIXTURES_H_
#define WASD_TESTS_RULES_RULES_FIXTURES_H_

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/workloadbuilder/error_matchers.h"

namespace wasd::testing {

enum class Via { kField, kAnnotation };

inline const char* ViaName(Via via) { return via == Via::kField ? "field" : "annotation"; }

inline std::string PrefixOf(Via via) {
  return via == Via::kField ? "spec.scheduling" : "metadata.annotations[wasd.io/scheduling]";
}

inline nlohmann::json BaseDeployment() {
  static const nlohmann::json base = LoadJson("rules/deployment-base.json");
  return base;
}

// Puts `config` (JSON text) on `d` through `via` (the annotation holds the text as is).
inline nlohmann::json WithConfig(nlohmann::json d, Via via, const std::string& config) {
  if (via == Via::kField) {
    d["spec"]["scheduling"] = nlohmann::json::parse(config);
  } else {
    d["metadata"]["annotations"]["wasd.io/scheduling"] = config;
  }
  return d;
}

// Replaces a leading "P" in each expected path by the carrier prefix.
inline ExpectedErrors AtCarrier(const ExpectedErrors& rel, Via via) {
  ExpectedErrors out;
  for (const auto& [type, path] : rel) {
    out.emplace_back(type, !path.empty() && path[0] == 'P' ? PrefixOf(via) + path.substr(1) : path);
  }
  return out;
}

}  // namespace wasd::testing

#endif  // WASD_TESTS_RULES_RULES_FIXTURES_H_
