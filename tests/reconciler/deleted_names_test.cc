// DeletedNames (reconciler/deleted_names.h): the names whose deletion the
// caches saw, which decide whether a create re-reads its owner live.
#include "reconciler/deleted_names.h"

#include <catch2/catch.hpp>

namespace wasd::reconciler {
namespace {

struct FakeClock {
  DeletedNames::Clock::time_point now = DeletedNames::Clock::time_point{} + std::chrono::hours(1);
  std::function<DeletedNames::Clock::time_point()> Fn() {
    return [this] { return now; };
  }
};

TEST_CASE("deleted names: a deletion is remembered for kDeletedNamesFor, by namespace and name") {
  FakeClock clock;
  DeletedNames names(clock.Fn());
  CHECK_FALSE(names.Seen("ml", "train-abc"));
  names.Record("ml", "train-abc");
  CHECK(names.Seen("ml", "train-abc"));
  CHECK_FALSE(names.Seen("other", "train-abc"));
  CHECK_FALSE(names.Seen("ml", "train-abd"));
  clock.now += kDeletedNamesFor;
  CHECK(names.Seen("ml", "train-abc"));
  clock.now += std::chrono::seconds(1);
  CHECK_FALSE(names.Seen("ml", "train-abc"));
  CHECK(names.size() == 0);
}

TEST_CASE("deleted names: a newer deletion of the same name keeps it") {
  FakeClock clock;
  DeletedNames names(clock.Fn());
  names.Record("ml", "a");
  clock.now += std::chrono::minutes(8);
  names.Record("ml", "a");
  clock.now += std::chrono::minutes(5);  // 13 min after the first, 5 after the second
  CHECK(names.Seen("ml", "a"));
}

TEST_CASE(
    "deleted names: an overflow answers every name as deleted until the dropped one would "
    "have expired") {
  FakeClock clock;
  DeletedNames names(clock.Fn(), 2);
  names.Record("ml", "a");
  names.Record("ml", "b");
  CHECK_FALSE(names.Seen("ml", "never"));
  names.Record("ml", "c");  // "a" falls out
  CHECK(names.size() == 2);
  CHECK(names.Seen("ml", "a"));
  CHECK(names.Seen("ml", "never"));  // cannot tell: read the owner
  clock.now += kDeletedNamesFor + std::chrono::seconds(1);
  CHECK_FALSE(names.Seen("ml", "never"));
}

}  // namespace
}  // namespace wasd::reconciler
