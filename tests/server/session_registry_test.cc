#include "server/session_registry.h"

#include <catch2/catch.hpp>
#include <memory>

namespace wasd::server {
namespace {

struct FakeSession : DrainableSession {
  int drains = 0;
  void Drain() override { ++drains; }
};

TEST_CASE("drain reaches every session and fires once when the last leaves", "[unit][server]") {
  SessionRegistry registry;
  auto a = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  const auto ida = registry.Add(a);
  const auto idb = registry.Add(b);
  CHECK(registry.size() == 2);
  int fired = 0;
  registry.DrainAll([&] { ++fired; });
  CHECK(a->drains == 1);
  CHECK(b->drains == 1);
  CHECK(fired == 0);
  registry.Remove(ida);
  CHECK(fired == 0);
  registry.Remove(idb);
  CHECK(fired == 1);
  const auto idc = registry.Add(a);
  registry.Remove(idc);
  CHECK(fired == 1);
}

TEST_CASE("drain with no sessions fires at once; cleared callback never fires", "[unit][server]") {
  SessionRegistry registry;
  int fired = 0;
  registry.DrainAll([&] { ++fired; });
  CHECK(fired == 1);

  SessionRegistry other;
  auto s = std::make_shared<FakeSession>();
  const auto id = other.Add(s);
  other.DrainAll([&] { ++fired; });
  other.ClearOnEmpty();
  other.Remove(id);
  CHECK(fired == 1);
}

}  // namespace
}  // namespace wasd::server
