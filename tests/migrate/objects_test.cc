// migrate/objects.h: the objects of a Deployment found by ownership (also
// after its ReplicaSets are gone), and when a Deployment counts as Available.
#include "migrate/objects.h"

#include <catch2/catch.hpp>

namespace wasd::migrate {
namespace {

using nlohmann::json;

json Obj(const std::string& name, const std::string& uid, json owners = json::array()) {
  return {{"metadata", {{"name", name}, {"uid", uid}, {"ownerReferences", std::move(owners)}}}};
}

json Ref(const std::string& kind, const std::string& uid, bool controller) {
  return {{"kind", kind}, {"name", "n"}, {"uid", uid}, {"controller", controller}};
}

TEST_CASE("a Deployment's ReplicaSets, Workload and PodGroups by ownership", "[unit]") {
  const std::vector<json> rss = {Obj("web-a", "rs-a", {Ref("Deployment", "dep", true)}),
                                 Obj("other-a", "rs-x", {Ref("Deployment", "other", true)})};
  const std::vector<json> wls = {Obj("web-w", "wl", {Ref("Deployment", "dep", true)}),
                                 Obj("other-w", "wl-x", {Ref("Deployment", "other", true)})};
  const std::vector<json> pgs = {
      // wasd's: controlled by the ReplicaSet, also owned by the Workload.
      Obj("web-a-pg", "pg-a", {Ref("ReplicaSet", "rs-a", true), Ref("Workload", "wl", false)}),
      // Owned only by the Workload.
      Obj("web-b-pg", "pg-b", {Ref("Workload", "wl", false)}),
      // A ReplicaSet that is gone now but was seen before.
      Obj("web-old-pg", "pg-old", {Ref("ReplicaSet", "rs-old", true)}),
      Obj("other-pg", "pg-x", {Ref("ReplicaSet", "rs-x", true)}),
      Obj("no-uid", "", {Ref("ReplicaSet", "rs-a", true)})};
  const Owned o = OwnedBy("dep", {"rs-old"}, rss, wls, pgs);
  CHECK(o.replicasets == std::vector<ObjectRef>{{"ReplicaSet", "web-a", "rs-a"}});
  CHECK(o.workloads == std::vector<ObjectRef>{{"Workload", "web-w", "wl"}});
  CHECK(o.podgroups == std::vector<ObjectRef>{{"PodGroup", "web-a-pg", "pg-a"},
                                              {"PodGroup", "web-b-pg", "pg-b"},
                                              {"PodGroup", "web-old-pg", "pg-old"}});
  CHECK(o.Text() ==
        "ReplicaSet web-a, Workload web-w, PodGroup web-a-pg, PodGroup web-b-pg, PodGroup "
        "web-old-pg");
  CHECK_FALSE(o.empty());

  // Without the remembered ReplicaSet its PodGroup is not found.
  CHECK(OwnedBy("dep", {}, rss, wls, pgs).podgroups.size() == 2);
  // Nothing left.
  const Owned none = OwnedBy("dep", {"rs-a"}, {}, {}, {});
  CHECK(none.empty());
  CHECK(none.Text() == "none");
  CHECK(OwnedBy("", {}, rss, wls, pgs).empty());
}

json Dep(int replicas, int generation, json status) {
  return {{"metadata", {{"generation", generation}}},
          {"spec", {{"replicas", replicas}}},
          {"status", std::move(status)}};
}

json Available(const std::string& s) {
  return json::array({{{"type", "Available"}, {"status", s}, {"message", "m"}}});
}

TEST_CASE("Available: rolled out, every replica available, condition True", "[unit]") {
  const json ok = {{"observedGeneration", 2},
                   {"replicas", 3},
                   {"updatedReplicas", 3},
                   {"availableReplicas", 3},
                   {"conditions", Available("True")}};
  CHECK(NotAvailableWhy(Dep(3, 2, ok)) == "");
  CHECK(NotAvailableWhy(Dep(3, 3, ok)) ==
        "the Deployment controller has not seen the new spec yet");
  json s = ok;
  s["updatedReplicas"] = 1;
  CHECK(NotAvailableWhy(Dep(3, 2, s)) == "1 of 3 replicas created");
  s = ok;
  s["availableReplicas"] = 2;
  CHECK(NotAvailableWhy(Dep(3, 2, s)) == "2 of 3 replicas available");
  s = ok;
  s["replicas"] = 5;
  CHECK(NotAvailableWhy(Dep(3, 2, s)) == "2 old replicas still terminating");
  s = ok;
  s["conditions"] = Available("False");
  CHECK(NotAvailableWhy(Dep(3, 2, s)) == "condition Available is not True: m");
  s.erase("conditions");
  CHECK(NotAvailableWhy(Dep(3, 2, s)) == "no condition Available yet");
  CHECK(NotAvailableWhy(json()) == "the Deployment controller has not seen the new spec yet");
}

}  // namespace
}  // namespace wasd::migrate
