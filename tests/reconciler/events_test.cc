// EventJson: the Event posted; RepeatFilter: which Events EventRecorder posts again.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "reconciler/events.h"

namespace wasd::reconciler {
namespace {

using Clock = RepeatFilter::Clock;
using nlohmann::json;

TEST_CASE("event JSON: the core/v1 Event kubectl describe shows, escaped", "[unit]") {
  const json deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", "web"}, {"namespace", "ml"}, {"uid", "u-1"}, {"resourceVersion", "42"}}}};
  // Quotes, a backslash, a newline and a byte that is not UTF-8 in the message.
  const std::string message = "waiting \"for\" 3/4\\\n\xff";
  const std::string text = EventJson(deployment, "Warning", "WaitingForQuorum", message, "wasd-0",
                                     "abc123", "2026-12-03T09:00:00Z");
  const json got = json::parse(text);  // throws when the text is not JSON
  const json want = {{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata", {{"name", "web.abc123"}, {"namespace", "ml"}}},
                     {"involvedObject",
                      {{"apiVersion", "apps/v1"},
                       {"kind", "Deployment"},
                       {"name", "web"},
                       {"namespace", "ml"},
                       {"uid", "u-1"},
                       {"resourceVersion", "42"}}},
                     {"type", "Warning"},
                     {"reason", "WaitingForQuorum"},
                     {"message", "waiting \"for\" 3/4\\\n\xef\xbf\xbd"},  // the bad byte as U+FFFD
                     {"source", {{"component", "wasd-reconciler"}}},
                     {"reportingComponent", "wasd-reconciler"},
                     {"reportingInstance", "wasd-0"},
                     {"firstTimestamp", "2026-12-03T09:00:00Z"},
                     {"lastTimestamp", "2026-12-03T09:00:00Z"},
                     {"count", 1}};
  CHECK(got == want);
  // No resourceVersion known: the field is left out, not empty.
  json bare = deployment;
  bare["metadata"].erase("resourceVersion");
  const json no_rv = json::parse(EventJson(bare, "Normal", "Scheduled", "4/4", "i", "s", "t"));
  CHECK_FALSE(no_rv["involvedObject"].contains("resourceVersion"));
  CHECK(no_rv["involvedObject"]["uid"] == "u-1");
}

TEST_CASE("repeat filter: a Warning once per window, a Normal event every time", "[unit]") {
  RepeatFilter filter;
  const Clock::time_point t0{};
  const std::string warning = "uid-1\nPodGroupTerminating\nPodGroup web-1 is still terminating";
  CHECK(filter.Admit("Warning", warning, t0));
  CHECK_FALSE(filter.Admit("Warning", warning, t0 + std::chrono::minutes(1)));
  CHECK_FALSE(filter.Admit("Warning", warning, t0 + kEventRepeatWindow - std::chrono::seconds(1)));
  CHECK(filter.Admit("Warning", warning, t0 + kEventRepeatWindow));
  // Another Deployment, reason or message is another Event.
  CHECK(filter.Admit("Warning", "uid-2\nPodGroupTerminating\nPodGroup web-1 is still terminating",
                     t0 + std::chrono::minutes(1)));

  // The same deletion message twice (scale to 0, later a rollout): both posted,
  // and nothing is remembered for Normal events.
  const std::string deleted =
      "uid-1\nPodGroupDeleted\nDeleted PodGroup web-1: ReplicaSet web-1 has no replicas";
  const std::size_t before = filter.remembered();
  CHECK(filter.Admit("Normal", deleted, t0));
  CHECK(filter.Admit("Normal", deleted, t0 + std::chrono::seconds(5)));
  CHECK(filter.remembered() == before);
}

TEST_CASE("repeat filter: memory stays bounded", "[unit]") {
  RepeatFilter filter;
  Clock::time_point t{};
  for (std::size_t i = 0; i < kMaxRememberedEvents + 10; ++i) {
    t += std::chrono::milliseconds(1);
    REQUIRE(filter.Admit("Warning", "uid-" + std::to_string(i) + "\nForeignObject\nx", t));
  }
  CHECK(filter.remembered() == kMaxRememberedEvents);
  // The oldest went first: the first key is admitted again at once, the newest is not.
  CHECK(filter.Admit("Warning", "uid-0\nForeignObject\nx", t));
  CHECK_FALSE(filter.Admit(
      "Warning", "uid-" + std::to_string(kMaxRememberedEvents + 9) + "\nForeignObject\nx", t));
}

TEST_CASE("repeat filter: counts in a message do not make another condition", "[unit]") {
  CHECK(WithoutCounts("2 pod(s) are held; 14 pod(s) stay") == "# pod(s) are held; # pod(s) stay");
  CHECK(WithoutCounts("") == "");
  CHECK(WithoutCounts("v1beta1 pod(s)") == "v1beta1 pod(s)");  // not a count of its own
  CHECK(WithoutCounts("3 member(s) were bound") == "3 member(s) were bound");
  // The recorder compares messages this way: a condition whose pod count grows as
  // pods arrive is posted once per window, not once per pod.
  CHECK(WithoutCounts("2 pod(s) are held by kai-scheduler") ==
        WithoutCounts("3 pod(s) are held by kai-scheduler"));
  CHECK(WithoutCounts("2 pod(s) are held by kai-scheduler") !=
        WithoutCounts("2 pod(s) stay gated by wasd"));
}

}  // namespace
}  // namespace wasd::reconciler
