// RecentWrites (our answers until the watch catches up), ObjectIndex, and the
// Event object.
#include "reconciler/recent_writes.h"

#include <catch2/catch.hpp>

#include "reconciler/events.h"
#include "reconciler/object_index.h"

namespace wasd::reconciler {

using objects::Object;
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

Object Pg(const std::string& uid, const std::string& rv, const std::string& name = "pg") {
  return std::make_shared<const json>(json{
      {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", uid}, {"resourceVersion", rv}}}});
}

// An event of another object of the kind: the watch has reached `rv`.
Object Other(const std::string& rv) { return Pg("u9", rv, "other"); }

// The cache's copy, for Resolve.
RecentWrites::CacheRead Cached(Object o) {
  return [o = std::move(o)] { return o; };
}

// Same object (RecentWrites hands back a decoded copy, not the pointer).
bool Same(const Object& a, const Object& b) {
  return a == nullptr ? b == nullptr : (b != nullptr && *a == *b);
}

TEST_CASE("recent writes: ours until the cache has our version or a newer one", "[unit]") {
  RecentWrites::Clock::time_point now{100s};
  RecentWrites rw([&] { return now; });
  const Object ours = Pg("u1", "10");
  rw.Record(Kind::kPodGroup, ours);
  CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)), ours));        // cache lags
  CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(Pg("u1", "9"))), ours));  // older copy
  const Object newer = Pg("u1", "11");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(newer)) == newer);
  CHECK(rw.Resolve(Kind::kPod, "ns", "pg", Cached(nullptr)) == nullptr);  // other kind
  rw.Observe(Kind::kPodGroup, *Pg("u1", "10"), false);
  CHECK(rw.size() == 0);

  SECTION("entries expire once the watch has passed our write") {
    rw.Record(Kind::kPodGroup, ours);
    rw.Observe(Kind::kPodGroup, *Other("12"), false);  // another object, newer
    now += kRecentWriteTtl + 1s;
    CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)) == nullptr);
  }
  SECTION("entries outlive the TTL while the watch lags behind our write") {
    const Object lagging = Pg("u1", "20");
    rw.Record(Kind::kPodGroup, lagging);
    rw.Observe(Kind::kPodGroup, *Other("15"), false);  // the watch is at 15
    now += kRecentWriteTtl + 1s;
    CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(Pg("u1", "10"))), lagging));
    // Another kind's watch says nothing about this one.
    rw.Observe(Kind::kPod, *Other("25"), false);
    CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(Pg("u1", "10"))), lagging));
    SECTION("until that watch passes it") {
      rw.Observe(Kind::kPodGroup, *Other("21"), false);
      CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(Pg("u1", "10"))), Pg("u1", "10")));
      CHECK(rw.size() == 0);
    }
    SECTION("or kRecentWriteMaxAge") {
      now += kRecentWriteMaxAge;
      CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)) == nullptr);
    }
  }
  SECTION("entries of undecimal versions expire at the TTL") {
    rw.Record(Kind::kPodGroup, Pg("u1", "abc"));
    now += kRecentWriteTtl + 1s;
    CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)) == nullptr);
  }
}

TEST_CASE("recent writes: the cache is read after the entry is looked up", "[unit]") {
  RecentWrites rw;
  rw.Record(Kind::kPod, Pg("u1", "10"));
  // Our version arrives while Resolve runs: the informer updates its cache,
  // then its handler's Observe drops the entry (outside Resolve's lock, or
  // this would deadlock).
  Object cache = Pg("u1", "9");
  const Object got = rw.Resolve(Kind::kPod, "ns", "pg", [&] {
    cache = Pg("u1", "10");
    rw.Observe(Kind::kPod, *cache, false);
    return cache;
  });
  CHECK(got == cache);
  CHECK(rw.size() == 0);
  // No entry: the cache as read now (a copy read before the lookup could
  // predate the entry's removal and lack our write).
  CHECK(rw.Resolve(Kind::kPod, "ns", "pg", [&] { return cache; }) == cache);
}

TEST_CASE("recent writes: an answer the watch already passed is not kept", "[unit]") {
  RecentWrites rw;
  rw.Observe(Kind::kPodGroup, *Pg("u1", "10"), false);  // its event came first
  rw.Record(Kind::kPodGroup, Pg("u1", "10"));
  CHECK(rw.size() == 0);
  rw.Record(Kind::kPodGroup, Pg("u1", "11"));  // a later write: kept
  CHECK(rw.size() == 1);
}

TEST_CASE("recent writes: each resource's watch has its own mark", "[unit]") {
  RecentWrites::Clock::time_point now{100s};
  RecentWrites rw([&] { return now; });
  auto group = [](const std::string& api_version, const std::string& name, const std::string& rv) {
    return std::make_shared<const json>(json{
        {"apiVersion", api_version},
        {"metadata",
         {{"name", name}, {"namespace", "ns"}, {"uid", "u-" + name}, {"resourceVersion", rv}}}});
  };
  rw.Record(Kind::kPodGroup, group("scheduling.k8s.io/v1beta1", "native", "20"));
  // Volcano's watch is ahead; the native PodGroups' watch is not.
  rw.Observe(Kind::kPodGroup, *group("scheduling.volcano.sh/v1beta1", "v", "30"), false);
  now += kRecentWriteTtl + 1s;
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "native", Cached(nullptr)) != nullptr);
  rw.Observe(Kind::kPodGroup, *group("scheduling.k8s.io/v1beta1", "other", "31"), false);
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "native", Cached(nullptr)) == nullptr);
}

TEST_CASE("recent writes: entries nobody reads again are swept", "[unit]") {
  RecentWrites::Clock::time_point now{100s};
  RecentWrites rw([&] { return now; });
  rw.Record(Kind::kPodGroup, Pg("u1", "10"));
  rw.Observe(Kind::kPodGroup, *Other("11"), false);
  now += kRecentWriteTtl + 1s;
  CHECK(rw.size() == 1);
  rw.Observe(Kind::kPodGroup, *Other("12"), false);  // any call sweeps, once per TTL
  CHECK(rw.size() == 0);
}

TEST_CASE("recent writes: an entry keeps the cache's projection, encoded", "[unit]") {
  RecentWrites rw;
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "p"},
        {"namespace", "ns"},
        {"uid", "u1"},
        {"resourceVersion", "5"},
        {"labels", {{"app", "web"}}},
        {"managedFields", json::array({{{"manager", "kubectl"}}})}}},
      {"spec",
       {{"schedulingGates", json::array()},
        {"containers", json::array({{{"name", "c"}, {"image", std::string(4096, 'x')}}})}}}};
  rw.Record(Kind::kPod, std::make_shared<const json>(pod));
  const Object got = rw.Resolve(Kind::kPod, "ns", "p", Cached(nullptr));
  REQUIRE(got != nullptr);
  CHECK(got->at("metadata").at("uid") == "u1");
  CHECK(got->at("spec").at("schedulingGates") == json::array());
  CHECK_FALSE(got->at("metadata").contains("managedFields"));
  CHECK_FALSE(got->at("spec").contains("containers"));
  CHECK(rw.encoded_bytes() < 200);  // not the 4 KB image name
}

TEST_CASE("recent writes: a deletion hides the stale cached copy, not a new object", "[unit]") {
  RecentWrites rw;
  rw.RecordDeleted(Kind::kPodGroup, "ns", "pg", "u1");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(Pg("u1", "10"))) == nullptr);
  const Object fresh = Pg("u2", "20");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(fresh)) == fresh);
  rw.Observe(Kind::kPodGroup, *Pg("u1", "12"), false);  // a late update of the old one
  CHECK(rw.size() == 1);
  rw.Observe(Kind::kPodGroup, *Pg("u1", "12"), true);
  CHECK(rw.size() == 0);
}

TEST_CASE("recent writes: a deletion's version keeps it while the watch lags", "[unit]") {
  RecentWrites::Clock::time_point now{100s};
  RecentWrites rw([&] { return now; });
  rw.Observe(Kind::kPodGroup, *Other("15"), false);
  rw.RecordGone(Kind::kPodGroup, *Pg("u1", "20"));
  now += kRecentWriteTtl + 1s;
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(Pg("u1", "10"))) ==
        nullptr);  // still hidden
  rw.Observe(Kind::kPodGroup, *Other("21"), false);
  const Object stale = Pg("u1", "10");
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(stale)) ==
        stale);  // the cache decides again
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
  CHECK(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)) == nullptr);
  // A new object of the same name (new uid) is recorded as usual.
  const Object fresh = Pg("u2", "20");
  rw.Record(Kind::kPodGroup, fresh);
  CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)), fresh));

  SECTION("tombstones expire with the entries") {
    now += kRecentWriteTtl + 1s;
    rw.Observe(Kind::kPodGroup, *Other("30"), false);  // any call expires old tombstones
    const Object late = Pg("u1", "31");                // (a version the watch has not passed)
    rw.Record(Kind::kPodGroup, late);
    CHECK(Same(rw.Resolve(Kind::kPodGroup, "ns", "pg", Cached(nullptr)), late));
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

}  // namespace
}  // namespace wasd::reconciler
