// RecentWrites (our answers until the watch catches up), ObjectIndex, and the
// Event object.
#include "reconciler/recent_writes.h"

#include <catch2/catch.hpp>

#include "reconciler/events.h"
#include "reconciler/object_index.h"

namespace wasd::reconciler {

using planner::Object;
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

Object Pg(const std::string& uid, const std::string& rv) {
  return std::make_shared<const json>(json{
      {"metadata", {{"name", "pg"}, {"namespace", "ns"}, {"uid", uid}, {"resourceVersion", rv}}}});
}

TEST_CASE("recent writes: ours until the cache has our version or a newer one", "[unit]") {
  RecentWrites::Clock::time_point now{100s};
  RecentWrites rw([&] { return now; });
  const Object ours = Pg("u1", "10");
  rw.Record(Kind::kPodGroup, ours);
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", nullptr) == ours);        // cache lags
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Pg("u1", "9")) == ours);  // older copy
  const Object newer = Pg("u1", "11");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", newer) == newer);
  CHECK(rw.Resolve(Kind::kPod, "ns", "pg", nullptr) == nullptr);  // other kind
  rw.Observe(Kind::kPodGroup, *Pg("u1", "10"), false);
  CHECK(rw.size() == 0);

  SECTION("entries expire") {
    rw.Record(Kind::kPodGroup, ours);
    now += kRecentWriteTtl + 1s;
    CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", nullptr) == nullptr);
  }
}

TEST_CASE("recent writes: a deletion hides the stale cached copy, not a new object", "[unit]") {
  RecentWrites rw;
  rw.RecordDeleted(Kind::kPodGroup, "ns", "pg", "u1");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Pg("u1", "10")) == nullptr);
  const Object fresh = Pg("u2", "20");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", fresh) == fresh);
  rw.Observe(Kind::kPodGroup, *Pg("u1", "12"), false);  // a late update of the old one
  CHECK(rw.size() == 1);
  rw.Observe(Kind::kPodGroup, *Pg("u1", "12"), true);
  CHECK(rw.size() == 0);
}

TEST_CASE("recent writes: an answer arriving after the watch's DELETED event is ignored",
          "[unit]") {
  // The scale-to-zero race of issue 11: DELETE of a PodGroup behind its
  // finalizer answers with the Terminating object, but the finalizer was
  // already gone and the watch delivered DELETED first. Recording that
  // answer would make the PodGroup look "still Terminating" for 30 s.
  RecentWrites::Clock::time_point now{100s};
  RecentWrites rw([&] { return now; });
  rw.Observe(Kind::kPodGroup, *Pg("u1", "12"), true);
  rw.Record(Kind::kPodGroup, Pg("u1", "11"));
  CHECK(rw.size() == 0);
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", nullptr) == nullptr);
  // A new object of the same name (new uid) is recorded as usual.
  const Object fresh = Pg("u2", "20");
  rw.Record(Kind::kPodGroup, fresh);
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", nullptr) == fresh);

  SECTION("tombstones expire with the entries") {
    now += kRecentWriteTtl + 1s;
    rw.Observe(Kind::kPodGroup, *Pg("u3", "30"), false);  // any call expires old tombstones
    const Object late = Pg("u1", "11");
    rw.Record(Kind::kPodGroup, late);
    CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", nullptr) == late);
  }
}

TEST_CASE("resource versions compare as numbers when they are numbers", "[unit]") {
  CHECK(VersionAtLeast("10", "9"));
  CHECK_FALSE(VersionAtLeast("9", "10"));
  CHECK(VersionAtLeast("abc", "abc"));
  CHECK_FALSE(VersionAtLeast("abd", "abc"));
}

TEST_CASE("object index: move, remove, lookup", "[unit]") {
  ObjectIndex idx;
  idx.Set("ns/a", "a", "ns/web");
  idx.Set("ns/b", "b", "ns/web");
  CHECK(idx.Lookup("ns/web") == std::vector<std::string>{"a", "b"});
  idx.Set("ns/a", "a", "ns/api");
  CHECK(idx.Lookup("ns/web") == std::vector<std::string>{"b"});
  CHECK(idx.Lookup("ns/api") == std::vector<std::string>{"a"});
  idx.Remove("ns/b");
  CHECK(idx.Lookup("ns/web").empty());
}

TEST_CASE("event object: core/v1 Event on the Deployment from wasd-reconciler", "[unit]") {
  const json d = {
      {"metadata",
       {{"name", "web"}, {"namespace", "ml"}, {"uid", "d1"}, {"resourceVersion", "7"}}}};
  const json e =
      EventObject(d, "Warning", "ForeignObject", "msg", "host_1", "abc", "2025-01-01T00:00:00Z");
  CHECK(e["metadata"] == json{{"name", "web.abc"}, {"namespace", "ml"}});
  CHECK(e["involvedObject"] == json{{"apiVersion", "apps/v1"},
                                    {"kind", "Deployment"},
                                    {"name", "web"},
                                    {"namespace", "ml"},
                                    {"uid", "d1"},
                                    {"resourceVersion", "7"}});
  CHECK(e["source"]["component"] == "wasd-reconciler");
  CHECK(e["reportingComponent"] == "wasd-reconciler");
  CHECK(e["reportingInstance"] == "host_1");
  CHECK(e["type"] == "Warning");
  CHECK(e["reason"] == "ForeignObject");
  CHECK(e["count"] == 1);
}

}  // namespace
}  // namespace wasd::reconciler
