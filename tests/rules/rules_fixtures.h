// Shared helpers of the rules unit tests: a base Deployment (tests/testdata/
// rules/deployment-base.json: 3 replicas, Recreate, no carrier) and ways to
// put a scheduling configuration on it through either carrier.
#ifndef WASD_TESTS_RULES_RULES_FIXTURES_H_
#define WASD_TESTS_RULES_RULES_FIXTURES_H_

#include <functional>
#include <string>
#include <string_view>

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

// True when `text` names the field carrier spec.scheduling (or a field in
// it); spec.template.spec.schedulingGroup does not count.
inline bool NamesFieldCarrier(const std::string& text) {
  constexpr std::string_view kCarrier = "spec.scheduling";
  for (std::size_t at = text.find(kCarrier); at != std::string::npos;
       at = text.find(kCarrier, at + 1)) {
    const std::size_t end = at + kCarrier.size();
    if (end == text.size() || text[end] != 'G') return true;
  }
  return false;
}

}  // namespace wasd::testing

#endif  // WASD_TESTS_RULES_RULES_FIXTURES_H_
