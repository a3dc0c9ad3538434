// The reconciler's gang status: the condition it asks for, the status patch
// that sets only its own entry (and nothing when the cached Deployment says
// it already), the per-Deployment Event limiter, that the caches'
// projections keep every member the gang doctor reads, the wait
// for the fit preview's informers, and the Deployment updates the caches do
// not reconcile again (a status write).
#include "reconciler/gang_status.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/json_projection.h"
#include "doctor/diagnosis.h"
#include "reconciler/caches.h"
#include "reconciler/projections.h"
#include "tests/reconciler/fake_api.h"
#include "workloadbuilder/names.h"

namespace wasd::reconciler {
namespace {

using nlohmann::json;

json DeploymentWith(json conditions) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata",
             {{"name", "web"}, {"namespace", "team"}, {"uid", "d-1"}, {"resourceVersion", "41"}}},
            {"status", {{"replicas", 2}}}};
  if (!conditions.is_null()) d["status"]["conditions"] = std::move(conditions);
  return d;
}

json Available() {
  return {{"type", "Available"}, {"status", "True"}, {"reason", "MinimumReplicasAvailable"}};
}

json Gang(const std::string& status, const std::string& reason, const std::string& message) {
  return {{"type", "GangScheduled"},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastUpdateTime", "2026-12-01T10:00:00Z"},
          {"lastTransitionTime", "2026-12-01T10:00:00Z"}};
}

constexpr const char* kNow = "2026-12-02T07:00:00Z";

TEST_CASE("gang status: the condition follows the diagnosis", "[unit][gang]") {
  doctor::Diagnosis d;
  d.scheduled = false;
  d.reason = "WaitingForQuorum";
  d.message = "2/4 created, 2 gated by wasd, 0 bound, minCount 4";
  GangCondition c = ConditionFor(d);
  CHECK(c.status == "False");
  CHECK(c.reason == "WaitingForQuorum");
  CHECK(c.message == d.message);
  d.scheduled = true;
  d.reason = "Scheduled";
  c = ConditionFor(d);
  CHECK(c.status == "True");
  CHECK(c.reason == "Scheduled");
}

TEST_CASE("gang status: no patch when the cached Deployment says it already", "[unit][gang]") {
  const json dep =
      DeploymentWith(json::array({Available(), Gang("False", "WaitingForQuorum", "m")}));
  CHECK_FALSE(ConditionPatch(dep, {"False", "WaitingForQuorum", "m"}, kNow).has_value());
  REQUIRE(FindGangCondition(dep) != nullptr);
  CHECK((*FindGangCondition(dep))["reason"] == "WaitingForQuorum");
  CHECK(FindGangCondition(DeploymentWith(json::array({Available()}))) == nullptr);
}

TEST_CASE("gang status: replacing the entry tests its index and keeps the transition time",
          "[unit][gang]") {
  const json dep =
      DeploymentWith(json::array({Available(), Gang("False", "WaitingForQuorum", "m")}));
  SECTION("same status, new reason: lastTransitionTime kept") {
    const auto p = ConditionPatch(dep, {"False", "Unschedulable", "n"}, kNow);
    REQUIRE(p.has_value());
    REQUIRE(p->size() == 2);
    CHECK(
        (*p)[0] ==
        json({{"op", "test"}, {"path", "/status/conditions/1/type"}, {"value", "GangScheduled"}}));
    CHECK((*p)[1]["op"] == "replace");
    CHECK((*p)[1]["path"] == "/status/conditions/1");
    const json& v = (*p)[1]["value"];
    CHECK(v["reason"] == "Unschedulable");
    CHECK(v["message"] == "n");
    CHECK(v["lastTransitionTime"] == "2026-12-01T10:00:00Z");
    CHECK(v["lastUpdateTime"] == kNow);
    CHECK_FALSE(v.contains("observedGeneration"));
  }
  SECTION("status changes: lastTransitionTime is now") {
    const auto p = ConditionPatch(dep, {"True", "Scheduled", "4/4 bound"}, kNow);
    REQUIRE(p.has_value());
    CHECK((*p)[1]["value"]["status"] == "True");
    CHECK((*p)[1]["value"]["lastTransitionTime"] == kNow);
  }
  SECTION("the same status, reason and message in a new message only") {
    const auto p = ConditionPatch(dep, {"False", "WaitingForQuorum", "m2"}, kNow);
    REQUIRE(p.has_value());
    CHECK((*p)[1]["value"]["message"] == "m2");
  }
}

TEST_CASE("gang status: a new entry is appended, never replacing the others", "[unit][gang]") {
  const auto p = ConditionPatch(DeploymentWith(json::array({Available()})),
                                {"False", "WaitingForQuorum", "m"}, kNow);
  REQUIRE(p.has_value());
  REQUIRE(p->size() == 2);
  CHECK((*p)[0] == json({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "41"}}));
  CHECK((*p)[1]["op"] == "add");
  CHECK((*p)[1]["path"] == "/status/conditions/-");
  CHECK((*p)[1]["value"]["type"] == "GangScheduled");
  CHECK((*p)[1]["value"]["lastTransitionTime"] == kNow);
}

TEST_CASE("gang status: an append from a stale cache cannot add a second entry", "[unit][gang]") {
  // L1: the first append is written; the cache has not seen it yet when the
  // next reconcile computes its patch from the same cached object.
  const json cached = DeploymentWith(json::array({Available()}));
  const auto first = ConditionPatch(cached, {"False", "WaitingForQuorum", "m"}, kNow);
  REQUIRE(first.has_value());
  json stored = cached.patch(*first);
  stored["metadata"]["resourceVersion"] = "42";  // the API server's write
  const auto second = ConditionPatch(cached, {"True", "Scheduled", "4/4 bound"}, kNow);
  REQUIRE(second.has_value());
  CHECK_THROWS(stored.patch(*second));  // refused (422): the doctor rechecks
  std::size_t entries = 0;
  for (const json& c : stored["status"]["conditions"]) entries += c["type"] == "GangScheduled";
  CHECK(entries == 1);
  // From the fresh object, the entry is replaced in place.
  const auto third = ConditionPatch(stored, {"True", "Scheduled", "4/4 bound"}, kNow);
  REQUIRE(third.has_value());
  const json after = stored.patch(*third);
  CHECK(after["status"]["conditions"].size() == 2);
  CHECK(after["status"]["conditions"][1]["status"] == "True");
}

TEST_CASE("gang status: no conditions array yet: created under a resourceVersion test",
          "[unit][gang]") {
  SECTION("status without conditions") {
    const auto p = ConditionPatch(DeploymentWith(nullptr), {"False", "PodGroupMissing", "m"}, kNow);
    REQUIRE(p.has_value());
    REQUIRE(p->size() == 2);
    CHECK((*p)[0] ==
          json({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "41"}}));
    CHECK((*p)[1]["path"] == "/status/conditions");
    CHECK((*p)[1]["value"].size() == 1);
  }
  SECTION("no status at all") {
    json dep = DeploymentWith(nullptr);
    dep.erase("status");
    const auto p = ConditionPatch(dep, {"False", "PodGroupMissing", "m"}, kNow);
    REQUIRE(p.has_value());
    CHECK((*p)[1]["path"] == "/status");
    CHECK((*p)[1]["value"]["conditions"][0]["reason"] == "PodGroupMissing");
  }
}

TEST_CASE("gang status: one Event per fact: none from the doctor where the reconciler reports it",
          "[unit][gang]") {
  // The planner's ForeignObject, PodGroupTerminating and InvalidSchedulingConfiguration
  // Warnings, the controller's APINotServed.
  for (const std::string_view reason :
       {doctor::kForeignObject, doctor::kPodGroupTerminating,
        doctor::kInvalidSchedulingConfiguration, doctor::kAPINotAvailable}) {
    CHECK(AnnouncedByReconciler(reason));
  }
  for (const std::string_view reason :
       {doctor::kUnsupportedProviderCapability, doctor::kPodGroupMissing, doctor::kWaitingForQuorum,
        doctor::kGatedByOther, doctor::kUnschedulable, doctor::kQueueBlocked,
        doctor::kScaleUpPending, doctor::kScheduled}) {
    CHECK_FALSE(AnnouncedByReconciler(reason));
  }
}

TEST_CASE("gang status: Events per Deployment are rate-limited", "[unit][gang]") {
  GangEventLimiter limiter;
  const auto t0 = GangEventLimiter::Clock::time_point{} + std::chrono::hours(1);
  for (int i = 0; i < kGangEventBurst; ++i) CHECK(limiter.Admit("d-1", t0));
  CHECK_FALSE(limiter.Admit("d-1", t0));
  CHECK_FALSE(limiter.Admit("d-1", t0 + kGangEventRefill / 2));
  CHECK(limiter.Admit("d-2", t0));  // another Deployment has its own bucket
  CHECK(limiter.Admit("d-1", t0 + kGangEventRefill + std::chrono::seconds(1)));
  CHECK_FALSE(limiter.Admit("d-1", t0 + kGangEventRefill + std::chrono::seconds(2)));
}

// ---------------------------------------------------------------- projections

constexpr const char* kGpu = "nvidia.com/gpu";

json Template() {
  return {{"metadata", {{"labels", {{"app", "train"}, {"wasd.io/managed", "true"}}}}},
          {"spec",
           {{"nodeSelector", {{"pool", "gpu"}}},
            {"tolerations", json::array({{{"key", "gpu"}, {"operator", "Exists"}}})},
            {"containers", json::array({{{"name", "c"},
                                         {"image", "trainer:1"},
                                         {"env", json::array({{{"name", "E"}, {"value", "x"}}})},
                                         {"resources",
                                          {{"requests", {{"cpu", "500m"}, {kGpu, "1"}}},
                                           {"limits", {{kGpu, "1"}}}}}}})},
            {"initContainers",
             json::array({{{"name", "init"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}};
}

json Noise(json o) {
  o["metadata"]["managedFields"] = json::array({{{"manager", "kube-controller-manager"}}});
  o["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = o.dump();
  o["metadata"]["generation"] = 3;
  return o;
}

doctor::GangInput FullInput() {
  doctor::GangInput in;
  in.deployment = Noise(
      {{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata",
        {{"name", "train"},
         {"namespace", "ml"},
         {"uid", "d-1"},
         {"resourceVersion", "9"},
         {"labels", {{"wasd.io/managed", "true"}}},
         {"annotations",
          {{"wasd.io/scheduling", R"({"schedulingPolicy":{"gang":{"minCount":3}},)"
                                  R"("schedulingConstraints":{"topology":[{"key":"zone"}]}})"}}}}},
       {"spec", {{"replicas", 4}, {"template", Template()}}},
       {"status",
        {{"conditions", json::array({Available(), Gang("False", "WaitingForQuorum", "m")})}}}});
  json rs = Noise({{"apiVersion", "apps/v1"},
                   {"kind", "ReplicaSet"},
                   {"metadata",
                    {{"name", "train-abc"},
                     {"namespace", "ml"},
                     {"uid", "rs-1"},
                     {"resourceVersion", "10"},
                     {"creationTimestamp", "2026-12-02T06:00:00Z"},
                     {"labels", {{"wasd.io/managed", "true"}}},
                     {"annotations", {{"deployment.kubernetes.io/revision", "2"}}},
                     {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                       {"kind", "Deployment"},
                                                       {"name", "train"},
                                                       {"uid", "d-1"},
                                                       {"controller", true}}})}}},
                   {"spec", {{"replicas", 4}, {"template", Template()}}}});
  in.replicasets.push_back(rs);
  in.workload = Noise({{"apiVersion", "scheduling.k8s.io/v1beta1"},
                       {"kind", "Workload"},
                       {"metadata",
                        {{"name", workloadbuilder::GenerateWorkloadName("train", "d-1")},
                         {"namespace", "ml"},
                         {"uid", "w-1"},
                         {"resourceVersion", "11"},
                         {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                           {"kind", "Deployment"},
                                                           {"name", "train"},
                                                           {"uid", "d-1"},
                                                           {"controller", true}}})}}},
                       {"spec", json::object()}});
  in.group_objects.push_back(
      Noise({{"apiVersion", "scheduling.k8s.io/v1beta1"},
             {"kind", "PodGroup"},
             {"metadata",
              {{"name", workloadbuilder::PodGroupName("train-abc", "rs-1")},
               {"namespace", "ml"},
               {"uid", "pg-1"},
               {"resourceVersion", "12"},
               {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                 {"kind", "ReplicaSet"},
                                                 {"name", "train-abc"},
                                                 {"uid", "rs-1"},
                                                 {"controller", true}}})}}},
             {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", 3}}}}}}},
             {"status",
              {{"conditions", json::array({{{"type", "PodGroupInitiallyScheduled"},
                                            {"status", "False"},
                                            {"reason", "Unschedulable"},
                                            {"message", "0/2 nodes are available"}}})}}}}));
  for (int i = 0; i < 4; ++i) {
    json pod = Noise(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata",
          {{"name", "train-abc-" + std::to_string(i)},
           {"namespace", "ml"},
           {"uid", "p-" + std::to_string(i)},
           {"resourceVersion", "2" + std::to_string(i)},
           {"creationTimestamp", "2026-12-02T06:00:0" + std::to_string(i) + "Z"},
           {"labels", {{"wasd.io/managed", "true"}, {"pod-template-hash", "abc"}}},
           {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                             {"kind", "ReplicaSet"},
                                             {"name", "train-abc"},
                                             {"uid", "rs-1"},
                                             {"controller", true}}})}}},
         {"spec", Template()["spec"]},
         {"status",
          {{"phase", "Pending"},
           {"conditions",
            json::array({{{"type", "PodScheduled"},
                          {"status", "False"},
                          {"reason", "Unschedulable"},
                          {"message", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."},
                          {"lastTransitionTime", "2026-12-02T06:01:00Z"}}})}}}});
    in.pods.push_back(pod);
  }
  for (int i = 0; i < 2; ++i) {
    in.nodes.push_back(
        Noise({{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", "n" + std::to_string(i)},
                 {"uid", "n-" + std::to_string(i)},
                 {"resourceVersion", "5"},
                 {"labels", {{"zone", "z" + std::to_string(i)}, {"pool", "gpu"}}}}},
               {"spec", {{"taints", json::array({{{"key", "gpu"}, {"effect", "NoSchedule"}}})}}},
               {"status",
                {{"allocatable", {{"cpu", "8"}, {kGpu, "2"}, {"pods", "110"}}},
                 {"capacity", {{"cpu", "8"}}},
                 {"images", json::array({{{"names", json::array({"a", "b"})}}})}}}}));
  }
  in.bound_pods.push_back(
      Noise({{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata",
              {{"name", "other"}, {"namespace", "x"}, {"uid", "o-1"}, {"resourceVersion", "3"}}},
             {"spec",
              {{"nodeName", "n0"},
               {"containers",
                json::array({{{"name", "c"}, {"resources", {{"requests", {{kGpu, "1"}}}}}}})}}},
             {"status", {{"phase", "Running"}}}}));
  return in;
}

json Project(const json& full, const std::shared_ptr<const base::JsonProjection>& p) {
  json got = p->Parse(full.dump());
  REQUIRE_FALSE(got.is_discarded());
  return got;
}

TEST_CASE("gang status: the doctor diagnoses the same on the caches' projected objects",
          "[unit][gang][projection]") {
  const doctor::GangInput full = FullInput();
  doctor::GangInput projected;
  projected.deployment = Project(full.deployment, DeploymentProjection());
  for (const json& rs : full.replicasets) {
    projected.replicasets.push_back(Project(rs, ReplicaSetProjection()));
  }
  for (const json& p : full.pods) projected.pods.push_back(Project(p, PodProjection()));
  projected.workload = Project(full.workload, SchedulingObjectProjection());
  for (const json& g : full.group_objects) {
    projected.group_objects.push_back(Project(g, SchedulingObjectProjection()));
  }
  for (const json& n : full.nodes) projected.nodes.push_back(Project(n, NodeProjection()));
  for (const json& p : full.bound_pods) {
    projected.bound_pods.push_back(Project(p, BoundPodProjection()));
  }
  const doctor::Diagnosis want = doctor::Diagnose(full);
  const doctor::Diagnosis got = doctor::Diagnose(projected);
  // The scenario reads what the projections must keep: the pods' PodScheduled
  // message, the template's requests, nodeSelector and tolerations, the Nodes'
  // labels, taints and allocatable, a bound pod's requests.
  CHECK(want.reason == "Unschedulable");
  CHECK(want.fit.computed);
  CHECK(want.scheduler_said.find("Insufficient") != std::string::npos);
  CHECK(doctor::ToJson(got) == doctor::ToJson(want));
  // The cached Deployment still carries the condition the patch compares with.
  REQUIRE(FindGangCondition(projected.deployment) != nullptr);
  CHECK(*FindGangCondition(projected.deployment) == *FindGangCondition(full.deployment));
  // What is dropped is dropped: the Nodes' images, the last-applied copy.
  CHECK_FALSE(projected.nodes[0]["status"].contains("images"));
  CHECK_FALSE(projected.deployment["metadata"].contains("managedFields"));
}

TEST_CASE("gang status: settling holds a condition that is not Scheduled", "[unit][gang]") {
  using std::chrono::milliseconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  const GangCondition pending{"False", "WaitingForQuorum", "m"};
  const GangCondition scheduled{"True", "Scheduled", "m"};
  CHECK(SettleWait(pending, t0, t0, milliseconds(5000)) == milliseconds(5000));
  CHECK(SettleWait(pending, t0, t0 + milliseconds(1200), milliseconds(5000)) == milliseconds(3800));
  CHECK(SettleWait(pending, t0, t0 + milliseconds(5000), milliseconds(5000)) == milliseconds(0));
  CHECK(SettleWait(pending, t0, t0 + milliseconds(9000), milliseconds(5000)) == milliseconds(0));
  CHECK(SettleWait(scheduled, t0, t0, milliseconds(5000)) == milliseconds(0));
  CHECK(SettleWait(pending, t0, t0, milliseconds(0)) == milliseconds(0));
}

TEST_CASE("gang status: a Deployment update that moved only its status is not a change",
          "[unit][gang]") {
  const json before = DeploymentWith(json::array({Available()}));
  json after = before;
  after["metadata"]["resourceVersion"] = "42";
  after["status"]["conditions"].push_back(Gang("False", "WaitingForQuorum", "m"));
  CHECK(OnlyStatusMoved(before, after));
  // A resync delivers the same object: reconciled.
  CHECK_FALSE(OnlyStatusMoved(before, before));
  SECTION("a spec change") {
    after["spec"] = {{"replicas", 3}};
    CHECK_FALSE(OnlyStatusMoved(before, after));
  }
  SECTION("a metadata change") {
    after["metadata"]["labels"] = {{"wasd.io/managed", "true"}};
    CHECK_FALSE(OnlyStatusMoved(before, after));
  }
  SECTION("a member gone") {
    json gone = before;
    gone["metadata"]["resourceVersion"] = "42";
    gone.erase("kind");
    CHECK_FALSE(OnlyStatusMoved(before, gone));
  }
  SECTION("deleted (deletionTimestamp set)") {
    after["metadata"]["deletionTimestamp"] = "2026-12-02T07:00:00Z";
    CHECK_FALSE(OnlyStatusMoved(before, after));
  }
}

// GangStatus::Update against the fake API server, on an injected clock.
struct UpdateFixture {
  testing::FakeApi api;
  runtime::Logger log{runtime::LogLevel::kError};
  workloadbuilder::ClusterFacts facts;
  EventRecorder events{api, log, "test"};
  std::chrono::steady_clock::time_point now =
      std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  doctor::GangInput full = FullInput();
  planner::PlanInput observed;

  UpdateFixture() {
    // No GangScheduled entry yet: the first write is the condition.
    full.deployment["status"]["conditions"] = json::array({Available()});
    Cache(full.deployment);
    for (const json& rs : full.replicasets) observed.replicasets.push_back(Ptr(rs));
    for (const json& p : full.pods) observed.pods.push_back(Ptr(p));
    for (const json& g : full.group_objects) observed.podgroups.push_back(Ptr(g));
    observed.workloads.push_back(Ptr(full.workload));
  }
  static objects::Object Ptr(const json& o) { return std::make_shared<const json>(o); }
  // The Deployment in the store and, as the watch would bring it, in the cache.
  void Cache(const json& deployment) {
    const kube::Resource status = kube::Deployments().Sub("status");
    if (!api.Find(status, "ml", "train")) api.Put(status, deployment);
    observed.deployment = Ptr(*api.Find(status, "ml", "train"));
  }
  GangStatus Status(std::chrono::milliseconds settle) {
    return GangStatus(api, events, log, facts, settle, [this] { return now; });
  }
  // Fit inputs that are known (`ready`) or still syncing.
  FitInputsFn Fit(const bool& ready) {
    return
        [this, &ready](std::vector<objects::Object>* nodes, std::vector<objects::Object>* bound) {
          if (!ready) return false;
          for (const json& n : full.nodes) nodes->push_back(Ptr(n));
          for (const json& p : full.bound_pods) bound->push_back(Ptr(p));
          return true;
        };
  }
  // Every member still gated, no scheduler verdict: a gang on its way.
  void GateAll() {
    observed.pods.clear();
    for (json p : full.pods) {
      p["spec"]["schedulingGates"] = json::array({{{"name", "wasd.io/pod-group"}}});
      p["status"].erase("conditions");
      observed.pods.push_back(Ptr(p));
    }
  }
  const json* Written() {
    Cache(*api.Find(kube::Deployments().Sub("status"), "ml", "train"));
    return FindGangCondition(*observed.deployment);
  }
};

TEST_CASE("gang status: an Unschedulable gang is written once it settled, with its fit preview",
          "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(5000));
  bool synced = false;
  // The fit preview's informers are still listing: nothing yet, look again soon.
  GangUpdate u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK(u.recheck == kGangRecheck);
  CHECK(f.api.calls("patch") == 0);
  // Synced: the diagnosis is known, but it waits for the settle time.
  synced = true;
  f.now += std::chrono::milliseconds(300);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK(u.recheck == std::chrono::milliseconds(5000));
  CHECK(f.api.calls("patch") == 0);
  CHECK(status.patches() == 0);
  f.now += std::chrono::milliseconds(2000);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK(u.recheck == std::chrono::milliseconds(3000));
  CHECK(status.patches() == 0);
  // Settled: one patch and one Event, the preview in the message.
  f.now += std::chrono::milliseconds(3000);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK_FALSE(u.recheck.has_value());
  CHECK(status.patches() == 1);
  CHECK(status.events() == 1);
  const json* c = f.Written();
  REQUIRE(c != nullptr);
  CHECK((*c)["reason"] == "Unschedulable");
  CHECK((*c)["message"].get<std::string>().find("has room for") != std::string::npos);
  // Up to date: nothing more, however often it is diagnosed.
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK_FALSE(u.recheck.has_value());
  CHECK(status.patches() == 1);
  CHECK(status.events() == 1);
}

TEST_CASE("gang status: without settling the condition is written at once", "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(0));
  const bool synced = true;
  const GangUpdate u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK_FALSE(u.recheck.has_value());
  CHECK(u.wrote);
  CHECK(status.patches() == 1);
  REQUIRE(f.Written() != nullptr);
  CHECK((*f.Written())["reason"] == "Unschedulable");
}

TEST_CASE("gang status: the metrics count each gang under the reason it was published with",
          "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(0));
  const bool synced = true;
  std::string before;
  status.Render(&before);
  CHECK(before.find("wasd_gang_members{") == std::string::npos);  // nothing diagnosed yet
  CHECK(before.find("wasd_gangs{reason=\"Unschedulable\"} 0\n") != std::string::npos);
  REQUIRE(status.Update(f.observed, "ml", "train", true, f.Fit(synced)).status.ok());
  std::string text = "# what came before\n";
  status.Render(&text);
  CHECK(text.rfind("# what came before\n", 0) == 0);
  CHECK(text.find("wasd_gangs{reason=\"Unschedulable\"} 1\n") != std::string::npos);
  CHECK(text.find("wasd_gangs{reason=\"Scheduled\"} 0\n") != std::string::npos);
  CHECK(text.find("wasd_gangs{reason=\"NotAdmitted\"} 0\n") != std::string::npos);
  // Deployments the webhook never admitted are not reconciled: the caches
  // count them (Caches::CountNotAdmitted) and Render adds them.
  std::string with_unadmitted;
  status.Render(&with_unadmitted, 3);
  CHECK(with_unadmitted.find("wasd_gangs{reason=\"NotAdmitted\"} 3\n") != std::string::npos);
  CHECK(with_unadmitted.find("wasd_gangs{reason=\"Unschedulable\"} 1\n") != std::string::npos);
  const std::string created =
      "wasd_gang_members{namespace=\"ml\",deployment=\"train\",state=\"created\"} " +
      std::to_string(f.full.pods.size()) + "\n";
  CHECK(text.find(created) != std::string::npos);
  for (const std::string_view state : kGangMemberStates) {
    CHECK(text.find("deployment=\"train\",state=\"" + std::string(state) + "\"}") !=
          std::string::npos);
  }
}

TEST_CASE("gang status: wasd_gang_members only for the gangs --gang-member-metrics selects",
          "[unit][gang]") {
  const std::string series = "wasd_gang_members{namespace=\"ml\",deployment=\"train\",";
  const bool synced = true;
  {  // Unschedulable: shown by default and with all, not with none or a cap of 0 left.
    UpdateFixture f;
    GangStatus status = f.Status(std::chrono::milliseconds(0));
    REQUIRE(status.Update(f.observed, "ml", "train", true, f.Fit(synced)).status.ok());
    std::string text;
    status.Render(&text);
    CHECK(text.find(series) != std::string::npos);
    CHECK(text.find("wasd_gang_members_omitted_gangs 0\n") != std::string::npos);
    status.SetMemberSeries(GangMemberSeries::kNone, 0);
    text.clear();
    status.Render(&text);
    CHECK(text.find(series) == std::string::npos);
    CHECK(text.find("wasd_gangs{reason=\"Unschedulable\"} 1\n") != std::string::npos);
    status.SetMemberSeries(GangMemberSeries::kAll, 1);
    text.clear();
    status.Render(&text);
    CHECK(text.find(series) != std::string::npos);
  }
  {  // Scheduled (every member bound after its group existed): none by default.
    UpdateFixture f;
    GangStatus status = f.Status(std::chrono::milliseconds(0));
    f.observed.pods.clear();
    for (json p : f.full.pods) {
      p["spec"]["nodeName"] = "n0";
      p["status"] = {
          {"phase", "Running"},
          {"conditions", json::array({{{"type", "PodScheduled"},
                                       {"status", "True"},
                                       {"lastTransitionTime", "2026-12-02T07:00:00Z"}}})}};
      f.observed.pods.push_back(UpdateFixture::Ptr(p));
    }
    REQUIRE(status.Update(f.observed, "ml", "train", true, f.Fit(synced)).status.ok());
    std::string text;
    status.Render(&text);
    REQUIRE(text.find("wasd_gangs{reason=\"Scheduled\"} 1\n") != std::string::npos);
    CHECK(text.find(series) == std::string::npos);
    status.SetMemberSeries(GangMemberSeries::kAll, 0);
    text.clear();
    status.Render(&text);
    CHECK(text.find(series + "state=\"bound\"}") != std::string::npos);
  }
  CHECK(ParseGangMemberSeries("not-scheduled") == GangMemberSeries::kNotScheduled);
  CHECK_FALSE(ParseGangMemberSeries("scheduled").has_value());
}

TEST_CASE("gang status: Nodes that never sync delay the condition at most kFitSyncWait",
          "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(0));
  const bool synced = false;
  GangUpdate u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK(u.recheck == kGangRecheck);
  f.now += kFitSyncWait - std::chrono::milliseconds(1);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK(u.recheck == kGangRecheck);
  CHECK(status.patches() == 0);
  f.now += std::chrono::milliseconds(1);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK_FALSE(u.recheck.has_value());
  CHECK(status.patches() == 1);
  REQUIRE(f.Written() != nullptr);
  CHECK((*f.Written())["reason"] == "Unschedulable");
  CHECK((*f.Written())["message"].get<std::string>().find("has room for") == std::string::npos);
}

TEST_CASE("gang status: Scheduled is written at once, and a transient reason never",
          "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(5000));
  const bool synced = true;
  // Still on its way (members gated, no verdict): held.
  f.GateAll();
  GangUpdate u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  CHECK(u.recheck.has_value());
  CHECK(status.patches() == 0);
  // Placed a second later: Scheduled at once, the transient reason never written.
  f.now += std::chrono::seconds(1);
  f.observed.pods.clear();
  for (json p : f.full.pods) {
    p["spec"]["nodeName"] = "n0";
    p["status"] = {{"phase", "Running"}};
    f.observed.pods.push_back(UpdateFixture::Ptr(p));
  }
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK_FALSE(u.recheck.has_value());
  CHECK(status.patches() == 1);
  CHECK(status.events() == 1);
  REQUIRE(f.Written() != nullptr);
  CHECK((*f.Written())["reason"] == "Scheduled");
  CHECK(f.api.calls("create") == 1);  // the one Event
}

TEST_CASE(
    "gang status: while a gang settles, a look that cannot find it Scheduled diagnoses nothing",
    "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(5000));
  const bool synced = true;
  const auto gated = [&status] {
    std::string text;
    status.Render(&text);
    const std::string key = "deployment=\"train\",state=\"gated\"} ";
    const std::size_t at = text.find(key);
    return at == std::string::npos
               ? std::string("none")
               : text.substr(at + key.size(), text.find('\n', at) - at - key.size());
  };
  f.GateAll();
  GangUpdate u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.recheck.has_value());
  const std::string first = gated();
  CHECK(first == std::to_string(f.full.pods.size()));
  // A second later one gate is lifted, the member still unbound: no look.
  f.now += std::chrono::seconds(1);
  json lifted = *f.observed.pods[0];
  lifted["spec"].erase("schedulingGates");
  f.observed.pods[0] = UpdateFixture::Ptr(lifted);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.recheck.has_value());
  CHECK(*u.recheck == std::chrono::milliseconds(4000));
  CHECK(gated() == first);  // not diagnosed: the counts are the first look's
  CHECK(status.patches() == 0);
  // At the end of the settle time the look diagnoses and writes what is true then.
  f.now += std::chrono::seconds(4);
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK(u.wrote);
  CHECK(gated() == std::to_string(f.full.pods.size() - 1));
  CHECK(status.patches() == 1);
}

TEST_CASE("the doctor: a gang may be Scheduled only when every current member has a node",
          "[unit][gang]") {
  UpdateFixture f;
  f.GateAll();
  doctor::GangInput in = f.full;
  for (json& p : in.pods) p["spec"].erase("nodeName");
  CHECK_FALSE(doctor::MayBeScheduled(doctor::ViewOf(in)));
  for (json& p : in.pods) p["spec"]["nodeName"] = "n0";
  CHECK(doctor::MayBeScheduled(doctor::ViewOf(in)));
  in.replicasets.clear();  // no current ReplicaSet: the diagnosis decides
  CHECK(doctor::MayBeScheduled(doctor::ViewOf(in)));
}

TEST_CASE("gang status: each look writes what is true then, one Event per reason change",
          "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(0));
  const bool synced = true;
  // Without settling, still on its way (members gated, no verdict): written as it is.
  f.GateAll();
  GangUpdate u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK(u.wrote);
  REQUIRE(f.Written() != nullptr);
  const std::string first = (*f.Written())["reason"];
  CHECK(first != "Scheduled");
  // Placed: Scheduled replaces it, with its own Event.
  f.now += std::chrono::seconds(1);
  f.observed.pods.clear();
  for (json p : f.full.pods) {
    p["spec"]["nodeName"] = "n0";
    p["status"] = {{"phase", "Running"}};
    f.observed.pods.push_back(UpdateFixture::Ptr(p));
  }
  u = status.Update(f.observed, "ml", "train", true, f.Fit(synced));
  REQUIRE(u.status.ok());
  CHECK_FALSE(u.recheck.has_value());
  CHECK(status.patches() == 2);
  CHECK(status.events() == 2);
  REQUIRE(f.Written() != nullptr);
  CHECK((*f.Written())["reason"] == "Scheduled");
  CHECK(f.api.calls("create") == 2);  // the two Events
}

TEST_CASE("gang status: members bound before their group post BoundBeforeGroup once",
          "[unit][gang]") {
  UpdateFixture f;
  GangStatus status = f.Status(std::chrono::milliseconds(0));
  const bool synced = true;
  // The group was created after its members were bound (at their creation,
  // 06:00:00-03, no PodScheduled condition): a scheduler that did not hold.
  f.observed.podgroups.clear();
  json group = f.full.group_objects[0];
  group["metadata"]["creationTimestamp"] = "2026-12-02T06:10:00Z";
  f.observed.podgroups.push_back(UpdateFixture::Ptr(group));
  const auto bind = [&f](std::size_t n) {
    f.observed.pods.clear();
    for (std::size_t i = 0; i < f.full.pods.size(); ++i) {
      json p = f.full.pods[i];
      if (i < n) {
        p["spec"]["nodeName"] = "n0";
        p["status"] = {{"phase", "Running"}};
      }
      f.observed.pods.push_back(UpdateFixture::Ptr(p));
    }
  };
  const auto warnings = [&f] {
    int n = 0;
    for (const json& e : f.api.Objects(kube::Events(), "ml")) {
      if (e["reason"] == "BoundBeforeGroup") {
        CHECK(e["type"] == "Warning");
        CHECK(e["message"].get<std::string>().find("--pod-hold=native=gate") != std::string::npos);
        ++n;
      }
    }
    return n;
  };
  bind(2);
  REQUIRE(status.Update(f.observed, "ml", "train", true, f.Fit(synced)).status.ok());
  CHECK(warnings() == 1);
  std::string text;
  status.Render(&text);
  CHECK(text.find("wasd_gang_members{namespace=\"ml\",deployment=\"train\",state=\"bound_before_"
                  "group\"} 2\n") != std::string::npos);
  // The same count again: no second Event.
  f.now += std::chrono::seconds(1);
  bind(2);
  REQUIRE(status.Update(f.observed, "ml", "train", true, f.Fit(synced)).status.ok());
  CHECK(warnings() == 1);
  // It grows: one more.
  f.now += std::chrono::seconds(1);
  bind(3);
  REQUIRE(status.Update(f.observed, "ml", "train", true, f.Fit(synced)).status.ok());
  CHECK(warnings() == 2);
  CHECK(BoundBeforeGroupMessage([] {
          doctor::Diagnosis d;
          d.backend = "volcano";
          d.replicaset = "train-abc";
          d.group_name = "g";
          d.counts.bound_before_group = 3;
          return d;
        }()) ==
        "3 member(s) of ReplicaSet train-abc were bound while group g did not exist: the "
        "scheduler did not hold them (backend volcano), so the gang was not scheduled as one. "
        "Set --pod-hold=volcano=gate on wasd webhook (chart webhook.podHold.volcano: gate) so "
        "that wasd's gate holds new pods until their group exists");
}

TEST_CASE("events: Normal Events only with --normal-events; Warnings always", "[unit][gang]") {
  testing::FakeApi api;
  runtime::Logger log{runtime::LogLevel::kError};
  const json dep = {{"metadata", {{"name", "web"}, {"namespace", "ml"}, {"uid", "d-1"}}}};
  EventRecorder off(api, log, "test", false);
  CHECK_FALSE(off.Record(dep, "Normal", "PodGroupCreated", "m"));
  CHECK(off.Record(dep, "Warning", "BoundBeforeGroup", "m"));
  EventRecorder on(api, log, "test", true);
  CHECK(on.Record(dep, "Normal", "PodGroupCreated", "m"));
  CHECK(api.Objects(kube::Events(), "ml").size() == 2);
}

TEST_CASE("gang status: the inputs' fingerprint moves with any object the doctor reads",
          "[unit][gang]") {
  UpdateFixture f;
  const planner::PlanInput& a = f.observed;
  const std::uint64_t fp = InputsFingerprint(a, true);
  CHECK(fp != 0);
  CHECK(InputsFingerprint(a, true) == fp);
  CHECK(InputsFingerprint(a, false) != fp);
  planner::PlanInput b = a;
  json pod = *b.pods[1];
  pod["metadata"]["resourceVersion"] = "99";
  b.pods[1] = UpdateFixture::Ptr(pod);
  CHECK(InputsFingerprint(b, true) != fp);
  b = a;
  b.pods.pop_back();
  CHECK(InputsFingerprint(b, true) != fp);
  b = a;
  json dep = *b.deployment;
  dep["metadata"]["resourceVersion"] = "99";
  b.deployment = UpdateFixture::Ptr(dep);
  CHECK(InputsFingerprint(b, true) != fp);
  // Another object with the same uid and resourceVersion: the same inputs.
  b = a;
  b.workloads[0] = UpdateFixture::Ptr(*a.workloads[0]);
  CHECK(InputsFingerprint(b, true) == fp);
}

}  // namespace
}  // namespace wasd::reconciler
