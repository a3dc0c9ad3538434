// migrate/saved.h: the manifest --apply saves before any write and where
// --resume re-enters (M4); migrate/objects.h InTreeOwnedBy: the in-tree
// controller's objects found by spec references too (L6).
#include "migrate/saved.h"

#include <catch2/catch.hpp>

#include "migrate/objects.h"

namespace wasd::migrate {
namespace {

using nlohmann::json;

Plan InPlacePlan() {
  Plan p;
  p.kind = PlanKind::kInPlace;
  p.ns = "ml";
  p.name = "web";
  p.uid = "u-1";
  p.new_name = "web";
  return p;
}

TEST_CASE("saved manifest: the header carries the plan, and reads back", "[unit]") {
  const std::string header = SavedHeader(InPlacePlan(), "/tmp/x.yaml");
  CHECK(header.find("kubectl wasd migrate --resume /tmp/x.yaml") != std::string::npos);
  CHECK(header.find("kubectl create -f /tmp/x.yaml") != std::string::npos);
  // Every line is a comment: kubectl reads the file as the Deployment below it.
  std::size_t at = 0;
  while (at < header.size()) {
    CHECK(header[at] == '#');
    at = header.find('\n', at) + 1;
  }
  const base::Result<SavedState> s = ReadSavedState(header + "apiVersion: apps/v1\n");
  REQUIRE(s.ok());
  CHECK(s.value().kind == PlanKind::kInPlace);
  CHECK(s.value().ns == "ml");
  CHECK(s.value().name == "web");
  CHECK(s.value().uid == "u-1");
  CHECK(s.value().new_name == "web");
  CHECK(DefaultSavedName("ml", "web") == "wasd-migrate-ml-web.yaml");
}

TEST_CASE("saved manifest: a file it cannot use says why", "[unit]") {
  CHECK(ReadSavedState("apiVersion: apps/v1\n").status().message().find("not saved by wasd") !=
        std::string::npos);
  CHECK(ReadSavedState("# wasd-migrate-state: {nope\n").status().message().find("not a JSON") !=
        std::string::npos);
  CHECK(ReadSavedState(R"(# wasd-migrate-state: {"plan":"in-place","namespace":"ml"})")
            .status()
            .message()
            .find("\"name\"") != std::string::npos);
  CHECK(
      ReadSavedState(
          R"(# wasd-migrate-state: {"plan":"x","namespace":"a","name":"b","uid":"c","newName":"d"})")
          .status()
          .message()
          .find("names no plan") != std::string::npos);
}

TEST_CASE("resume: re-enters where the cluster stands", "[unit]") {
  SavedState s;
  s.ns = "ml";
  s.name = "web";
  s.uid = "u-1";
  s.new_name = "web";
  CHECK(DecideResume(s, nullptr) == ResumeFrom::kCreate);
  json old = {{"metadata", {{"uid", "u-1"}}}, {"spec", json::object()}};
  CHECK(DecideResume(s, &old) == ResumeFrom::kDelete);
  old["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z";
  CHECK(DecideResume(s, &old) == ResumeFrom::kWaitGone);
  json created = {{"metadata", {{"uid", "u-2"}}},
                  {"spec", {{"scheduling", {{"schedulingPolicy", {{"basic", json::object()}}}}}}}};
  CHECK(DecideResume(s, &created) == ResumeFrom::kWaitInTree);
  json other = {{"metadata", {{"uid", "u-3"}}}, {"spec", json::object()}};
  CHECK(DecideResume(s, &other) == ResumeFrom::kConflict);
}

TEST_CASE("L6: the in-tree controller's objects by spec.controllerRef and workloadRef", "[unit]") {
  const std::vector<json> wls = {
      {{"metadata", {{"name", "web-w"}, {"uid", "wl"}}},
       {"spec",
        {{"controllerRef", {{"apiGroup", "apps"}, {"kind", "Deployment"}, {"name", "web"}}}}}},
      {{"metadata", {{"name", "other-w"}, {"uid", "wl-x"}}},
       {"spec", {{"controllerRef", {{"kind", "Deployment"}, {"name", "other"}}}}}},
      {{"metadata", {{"name", "stale-w"}, {"uid", "wl-s"}}},
       {"spec",
        {{"controllerRef", {{"kind", "Deployment"}, {"name", "web"}, {"uid", "old-uid"}}}}}}};
  const std::vector<json> pgs = {{{"metadata", {{"name", "web-pg"}, {"uid", "pg"}}},
                                  {"spec", {{"workloadRef", {{"name", "web-w"}}}}}},
                                 {{"metadata", {{"name", "x-pg"}, {"uid", "pg-x"}}},
                                  {"spec", {{"workloadRef", {{"name", "other-w"}}}}}}};
  const Owned o = InTreeOwnedBy("web", "dep", {}, wls, pgs);
  CHECK(o.workloads == std::vector<ObjectRef>{{"Workload", "web-w", "wl"}});
  CHECK(o.podgroups == std::vector<ObjectRef>{{"PodGroup", "web-pg", "pg"}});
  // By uid alone (OwnedBy), none of them is the Deployment's.
  CHECK(OwnedBy("dep", {}, {}, wls, pgs).empty());
}

}  // namespace
}  // namespace wasd::migrate
