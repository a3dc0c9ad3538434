#include "workloadbuilder/names.h"

#include <catch2/catch.hpp>

#include "workloadbuilder/validate.h"

namespace wb = wasd::workloadbuilder;

TEST_CASE("GenerateWorkloadName vectors (docs/api.md §c.1)", "[unit]") {
  CHECK(wb::GenerateWorkloadName("job", "uid-1") == "job-647cf7d9");
  CHECK(wb::GenerateWorkloadName("", "uid-1") == "647cf7d9");
  CHECK(wb::GenerateWorkloadName("inference-server", "6f1e2d3c-1111-4222-8333-944455556666") ==
        "inference-server-7cb9669c75");
}

TEST_CASE("GenerateWorkloadName truncates long owners to 253 bytes", "[unit]") {
  const std::string name = wb::GenerateWorkloadName(std::string(300, 'a'), "uid-1");
  CHECK(name.size() == 253);
  CHECK(name.substr(name.size() - 12) == "aaa-647cf7d9");
  CHECK(wb::IsDNS1123Subdomain(name).empty());
}

TEST_CASE("Hash building blocks", "[unit]") {
  CHECK(wb::Fnv1a32("") == 2166136261U);
  CHECK(wb::Fnv1a32("(types.UID)uid-1") == 20379385U);
  CHECK(wb::SafeEncodeHash(20379385U) == "647cf7d9");
  CHECK(wb::SafeEncodeHash(0) == "4");
}

TEST_CASE("The template name is a valid DNS label", "[unit]") {
  CHECK(wb::kPodGroupTemplateName == "pgt-0");
  CHECK(wb::IsDNS1123Label(wb::kPodGroupTemplateName).empty());
}
