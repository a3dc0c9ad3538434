#include "server/once_filter.h"

#include <catch2/catch.hpp>
#include <string>

using wasd::server::OnceFilter;

TEST_CASE("OnceFilter: each key once, and no more keys than its capacity", "[unit]") {
  OnceFilter once(3);
  CHECK(once.First("validate-deployment apps/v1 statefulsets"));
  CHECK_FALSE(once.First("validate-deployment apps/v1 statefulsets"));
  CHECK(once.First("mutate-pod v1 services"));
  CHECK(once.First("x"));
  // Full: a client sending endless distinct resources cannot grow it.
  for (int i = 0; i < 100; ++i) CHECK_FALSE(once.First("key " + std::to_string(i)));
  CHECK_FALSE(once.First("x"));
}
