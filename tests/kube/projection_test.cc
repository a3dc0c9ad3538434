#include "base/json_projection.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kube/watch_decoder.h"

namespace wasd::kube {
namespace {

using nlohmann::json;
using Projection = base::JsonProjection;

const json kObject = json::parse(R"j({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "p", "namespace": "ns", "uid": "u1",
               "labels": {"a": "1", "b": "2"},
               "annotations": {"keep": "x", "drop": "y"},
               "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
               "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "uid": "r1",
                                    "apiVersion": "apps/v1", "controller": true},
                                   {"kind": "Other", "name": "o", "uid": "o1"}]},
  "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "E", "value": "v"}]}],
           "schedulingGates": [{"name": "g"}], "nodeName": ""},
  "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled"}]}
})j");

const Projection kProjection({{"metadata", "name"},
                              {"metadata", "namespace"},
                              {"metadata", "labels"},
                              {"metadata", "annotations", "keep"},
                              {"metadata", "ownerReferences", "kind"},
                              {"metadata", "ownerReferences", "uid"},
                              {"spec", "schedulingGates"},
                              {"status", "phase"}});

TEST_CASE("projection: keeps listed members, drops the rest, arrays are transparent",
          "[unit][projection]") {
  const json got = kProjection.Parse(kObject.dump());
  const json want = json::parse(R"j({
    "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "1", "b": "2"},
                 "annotations": {"keep": "x"},
                 "ownerReferences": [{"kind": "ReplicaSet", "uid": "r1"},
                                     {"kind": "Other", "uid": "o1"}]},
    "spec": {"schedulingGates": [{"name": "g"}]},
    "status": {"phase": "Pending"}
  })j");
  CHECK(got == want);
}

TEST_CASE("projection: '*' keeps every member at its level; a shorter path wins",
          "[unit][projection]") {
  const Projection p({{"metadata", "*", "kind"}, {"spec"}, {"spec", "nodeName"}});
  const json got = p.Parse(kObject.dump());
  CHECK(got["spec"] == kObject["spec"]);
  CHECK(got["metadata"]["ownerReferences"] ==
        json::parse(R"([{"kind": "ReplicaSet"}, {"kind": "Other"}])"));
  CHECK(got["metadata"]["managedFields"] == json::array({json::object()}));
  // A scalar where the path goes deeper is kept as it is.
  CHECK(got["metadata"]["name"] == "p");
  CHECK_FALSE(got.contains("status"));
}

TEST_CASE("projection: name[key=value] keeps the array elements that match", "[unit][projection]") {
  const json pod = json::parse(R"j({
    "status": {"conditions": [
      {"type": "Initialized", "status": "True", "x": [{"type": "no"}]},
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
       "x": [{"type": "no"}, 1]},
      "scalar", 7, {"status": "no type"}, {"type": 1},
      {"type": "Ready", "status": "True"}]},
    "other": [{"type": "PodScheduled"}, {"type": "Ready"}]
  })j");
  SECTION("kept whole") {
    const Projection p({{"status", "conditions[type=PodScheduled]"}, {"other"}});
    const json want = json::parse(R"j({
      "status": {"conditions": [{"type": "PodScheduled", "status": "False",
                                 "reason": "Unschedulable", "x": [{"type": "no"}, 1]}]},
      "other": [{"type": "PodScheduled"}, {"type": "Ready"}]
    })j");
    CHECK(p.Parse(pod.dump()) == want);
    CHECK(p.Project(pod) == want);
  }
  SECTION("a path going on below it") {
    const Projection p(std::vector<std::vector<std::string>>{
        {"status", "conditions[type=PodScheduled]", "reason"}});
    // The selection reads `type`; only `reason` is kept of the element.
    const json want = json::parse(R"j({"status": {"conditions": [{"reason": "Unschedulable"}]}})j");
    CHECK(p.Parse(pod.dump()) == want);
    CHECK(p.Project(pod) == want);
  }
  SECTION("no element matches") {
    const Projection p(
        std::vector<std::vector<std::string>>{{"status", "conditions[type=Nothing]"}});
    const json want = json::parse(R"j({"status": {"conditions": []}})j");
    CHECK(p.Parse(pod.dump()) == want);
    CHECK(p.Project(pod) == want);
  }
}

TEST_CASE("projection: Project() on a decoded value equals Parse() of its text",
          "[unit][projection]") {
  CHECK(kProjection.Project(kObject) == kProjection.Parse(kObject.dump()));
  const Projection star({{"metadata", "*", "kind"}, {"spec"}});
  CHECK(star.Project(kObject) == star.Parse(kObject.dump()));
  CHECK(kProjection.Project(json::parse("[1, 2]")) == json::parse("[1, 2]"));
}

TEST_CASE("projection: the identity keeps everything", "[unit][projection]") {
  CHECK(Projection().keeps_all());
  CHECK(Projection().Parse(kObject.dump()) == kObject);
  CHECK(Projection(std::vector<std::vector<std::string>>{{}}).keeps_all());  // the root path
}

TEST_CASE("projection: text nlohmann refuses is refused, whatever is dropped",
          "[unit][projection]") {
  for (const std::string bad : {R"({"metadata": {"name": "p"}, "spec": {"containers": [1, 2,]}})",
                                R"({"metadata": {"name": "p"}, "status": {"phase": "x"})",
                                R"({"spec": {"x": "\ud800"}})", R"({"spec": tru})", "", "{} {}"}) {
    INFO(bad);
    CHECK(kProjection.Parse(bad).is_discarded());
    CHECK(json::parse(bad, nullptr, false).is_discarded());
  }
  // Values of any type survive where kept; a scalar where an object was
  // expected is kept as is (the readers check types).
  CHECK(kProjection.Parse(R"({"metadata": 5, "status": {"phase": null}})") ==
        json::parse(R"({"metadata": 5, "status": {"phase": null}})"));
  CHECK(kProjection.Parse("[1, 2]") == json::parse("[1, 2]"));
}

TEST_CASE("projection: Under() projects list items and keeps the list's metadata",
          "[unit][projection]") {
  const json list = {{"kind", "PodList"},
                     {"metadata", {{"resourceVersion", "7"}, {"continue", "c"}}},
                     {"items", json::array({kObject, kObject})}};
  const json got = kProjection.Under("items", {"metadata", "kind"}).Parse(list.dump());
  CHECK(got["metadata"] == list["metadata"]);
  CHECK(got["kind"] == "PodList");
  REQUIRE(got["items"].size() == 2);
  CHECK(got["items"][1] == kProjection.Parse(kObject.dump()));
}

TEST_CASE("projection: the watch decoder projects objects, never an ERROR's Status",
          "[unit][projection][watch]") {
  const std::string stream =
      json({{"type", "ADDED"}, {"object", kObject}}).dump() + "\n" +
      R"j({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"15"}}})j"
      "\n"
      R"j({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old","reason":"Expired","code":410}})j"
      "\n";
  WatchDecoder d(WatchDecoder::kDefaultMaxLineBytes,
                 Projection({{"metadata", "name"}, {"metadata", "resourceVersion"}}));
  std::vector<WatchEvent> events;
  REQUIRE(d.Feed(stream, events).ok());
  REQUIRE(events.size() == 3);
  CHECK(events[0].type == WatchEventType::kAdded);
  CHECK(events[0].object == json::parse(R"({"metadata": {"name": "p"}})"));
  CHECK(events[1].ResourceVersion() == "15");
  CHECK(events[2].type == WatchEventType::kError);
  CHECK(events[2].object["code"] == 410);
  CHECK(events[2].object["reason"] == "Expired");
  // A bad line is still a bad line.
  WatchDecoder d2(WatchDecoder::kDefaultMaxLineBytes, Projection({{"metadata"}}));
  CHECK_FALSE(d2.Feed(R"({"type":"ADDED","object":{"spec":[1,}})"
                      "\n",
                      events)
                  .ok());
}

TEST_CASE("projection: the 15 KB pod fixture keeps what a sparse path names",
          "[unit][projection]") {
  const std::filesystem::path file =
      std::filesystem::path(WASD_TESTDATA) / "bench" / "pod-15k.json";
  std::ifstream in(file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const json full = json::parse(text.str());
  REQUIRE(text.str().size() > 14'000);
  const json got = kProjection.Parse(text.str());
  CHECK(got["metadata"]["name"] == full["metadata"]["name"]);
  CHECK(got["metadata"]["labels"] == full["metadata"]["labels"]);
  CHECK(got["status"] == json{{"phase", "Running"}});
  CHECK(got.dump().size() < 600);
}

}  // namespace
}  // namespace wasd::kube
