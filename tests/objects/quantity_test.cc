// objects/quantity.h: Kubernetes quantities as milli-units.
#include <catch2/catch.hpp>

#include "objects/quantity.h"

namespace wasd::doctor {
namespace {

TEST_CASE("ParseQuantityMilli reads Kubernetes quantities", "[quantity]") {
  struct Case {
    const char* text;
    std::int64_t milli;
  };
  // clang-format off
  const Case cases[] = {
      {"0", 0},           {"1", 1000},          {"500m", 500},        {"1.5", 1500},
      {"0.1", 100},       {"2Gi", 2147483648000}, {"1Ki", 1024000},   {"1.5Gi", 1610612736000},
      {"1k", 1000000},    {"1M", 1000000000},   {"1e3", 1000000},     {"12E-1", 1200},
      {"1u", 1},          {"1n", 1},            {"2500u", 3},         {"+4", 4000},
      {"-1", -1000},      {"128974848", 128974848000}, {"1.", 1000},  {".5", 500},
      {"8", 8000},        {"100Mi", 104857600000},
  };
  // clang-format on
  for (const Case& c : cases) {
    INFO(c.text);
    REQUIRE(objects::ParseQuantityMilli(c.text) == std::optional<std::int64_t>(c.milli));
  }
}

TEST_CASE("ParseQuantityMilli refuses what is not a quantity or does not fit", "[quantity]") {
  for (const char* text :
       {"", "m", "1x", "1 Gi", "1GI", "1.2.3", "1e", "1e+", "1ee3", "Gi", "1Gie3", "--1", "9Ei",
        "9223372036854776", "1e1000", "1234567890123456789012345678901"}) {
    INFO(text);
    REQUIRE_FALSE(objects::ParseQuantityMilli(text).has_value());
  }
  // The largest that fits: 9223372036854775807 milli-units.
  REQUIRE(objects::ParseQuantityMilli("9223372036854775807m") ==
          std::optional<std::int64_t>(INT64_MAX));
  REQUIRE_FALSE(objects::ParseQuantityMilli("9223372036854775808m").has_value());
}

TEST_CASE("FormatQuantityMilli prints in the resource's units", "[quantity]") {
  REQUIRE(objects::FormatQuantityMilli("cpu", 500) == "500m");
  REQUIRE(objects::FormatQuantityMilli("cpu", 3000) == "3");
  REQUIRE(objects::FormatQuantityMilli("nvidia.com/gpu", 3000) == "3");
  REQUIRE(objects::FormatQuantityMilli("memory", 2147483648000) == "2Gi");
  REQUIRE(objects::FormatQuantityMilli("memory", 1610612736000) == "1536Mi");
  REQUIRE(objects::FormatQuantityMilli("memory", 1000000000) == "1000000");
  REQUIRE(objects::FormatQuantityMilli("hugepages-2Mi", 2097152000) == "2Mi");
  REQUIRE(objects::FormatQuantityMilli("memory", 0) == "0");
}

}  // namespace
}  // namespace wasd::doctor
