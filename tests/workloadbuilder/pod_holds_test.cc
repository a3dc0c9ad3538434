// Pod hold states and their words (workloadbuilder/pod_holds.h).
#include "workloadbuilder/pod_holds.h"

#include <catch2/catch.hpp>

namespace wasd::workloadbuilder {
namespace {

using nlohmann::json;

json NativePod(bool gated, bool linked) {
  json pod = {{"metadata", {{"name", "p"}, {"labels", {{"wasd.io/managed", "true"}}}}},
              {"spec", json::object()}};
  if (gated) pod["spec"]["schedulingGates"] = json::array({{{"name", "wasd.io/pod-group"}}});
  if (linked) pod["spec"]["schedulingGroup"] = {{"podGroupName", "g"}};
  return pod;
}

TEST_CASE("pod holds: each pod's state from the pod itself", "[unit]") {
  CHECK(HoldStateOf(NativePod(true, true), Backend::kNative) == PodHoldState::kGated);
  CHECK(HoldStateOf(NativePod(false, true), Backend::kNative) == PodHoldState::kScheduler);
  CHECK(HoldStateOf(NativePod(false, false), Backend::kNative) == PodHoldState::kUnheld);
  json bound = NativePod(false, true);
  bound["spec"]["nodeName"] = "n1";
  CHECK(HoldStateOf(bound, Backend::kNative) == PodHoldState::kPlaced);
  json scheduled = NativePod(false, true);
  scheduled["status"]["conditions"] = json::array({{{"type", "PodScheduled"}, {"status", "True"}}});
  CHECK(HoldStateOf(scheduled, Backend::kNative) == PodHoldState::kPlaced);
  json unschedulable = NativePod(false, true);
  unschedulable["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"}, {"status", "False"}}});
  CHECK(HoldStateOf(unschedulable, Backend::kNative) == PodHoldState::kScheduler);
  json done = NativePod(true, true);
  done["status"]["phase"] = "Failed";
  CHECK(HoldStateOf(done, Backend::kNative) == PodHoldState::kDone);
  // A Volcano pod's link is its annotation, not spec.schedulingGroup.
  json volcano = NativePod(false, true);
  CHECK(HoldStateOf(volcano, Backend::kVolcano) == PodHoldState::kUnheld);
  volcano["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "g";
  CHECK(HoldStateOf(volcano, Backend::kVolcano) == PodHoldState::kScheduler);
}

TEST_CASE("pod holds: never ran means wasd's and never scheduled", "[unit]") {
  CHECK(WasdPodNeverRan(NativePod(false, true)));
  CHECK(WasdPodNeverRan(NativePod(true, true)));
  json other = NativePod(false, true);
  other["metadata"].erase("labels");
  CHECK_FALSE(WasdPodNeverRan(other));
  json bound = NativePod(false, true);
  bound["spec"]["nodeName"] = "n1";
  CHECK_FALSE(WasdPodNeverRan(bound));
}

TEST_CASE("pod holds: the words say gated only of gated pods", "[unit]") {
  const json gated = NativePod(true, true);
  json held = NativePod(false, true);
  held["spec"]["schedulerName"] = "default-scheduler";
  const json unheld = NativePod(false, false);
  const HoldCounts c = CountHolds({&gated, &held, &held, &unheld}, Backend::kNative);
  CHECK(c.gated == 1);
  CHECK(c.scheduler == 2);
  CHECK(c.unheld == 1);
  CHECK(HoldWords(c, "PodGroup g") ==
        "1 pod(s) stay gated by wasd (scheduling gate wasd.io/pod-group); 2 pod(s) are held by "
        "default-scheduler until PodGroup g exists; 1 pod(s) carry neither a gate nor a group "
        "link: nothing holds them, so they are scheduled one by one");
  const HoldCounts only_held = CountHolds({&held}, Backend::kNative);
  CHECK(HoldWords(only_held, "their group").find("gated") == std::string::npos);
  CHECK(HoldWords(CountHolds({}, Backend::kNative), "x") == "no pod waits");
}

}  // namespace
}  // namespace wasd::workloadbuilder
