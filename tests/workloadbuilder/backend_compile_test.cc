// The non-native compilers against hand-written vectors
// (tests/testdata/workloadbuilder/backends/<backend>-{deployment,podgroup}.json,
// written from each backend's PodGroup API), the pod link per
// backend, and the `backends` block through ReadSchedulingConfig.
#include "workloadbuilder/backend_compile.h"

#include <catch2/catch.hpp>

#include "tests/workloadbuilder/error_matchers.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"
#include "workloadbuilder/validate.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;
using wasd::testing::LoadJson;
using ET = wb::ErrorType;

namespace {

constexpr char kAnnotationPath[] = "metadata.annotations[wasd.io/scheduling]";

json ConfigOf(const json& deployment) {
  const wb::SchedulingConfig c = wb::ReadSchedulingConfig(deployment);
  INFO(wasd::testing::Describe(c.errors));
  REQUIRE(c.usable());
  REQUIRE(c.errors.empty());
  REQUIRE(wb::ValidateSchedulingConfig(c.config, c.path, /*strict=*/true).empty());
  return c.config;
}

wb::ClusterFacts Facts() {
  wb::ClusterFacts facts;
  facts.volcano_tiers = {{"kubernetes.io/hostname", {1, ""}},
                         {"topology.kubernetes.io/zone", {2, ""}}};
  facts.kai_topology = "cluster-topology";
  facts.kai_topology_levels = {"topology.kubernetes.io/zone", "kubernetes.io/hostname"};
  return facts;
}

const json& ReplicaSet() {
  static const json rs = LoadJson("workloadbuilder/kep-example-1-replicaset.json");
  return rs;
}

}  // namespace

TEST_CASE("BuildBackendPodGroup compiles the vector of each backend", "[backend]") {
  for (wb::Backend b : {wb::Backend::kVolcano, wb::Backend::kKai, wb::Backend::kCoscheduling}) {
    const std::string stem = "workloadbuilder/backends/" + std::string(wb::BackendName(b));
    DYNAMIC_SECTION(stem) {
      const json deployment = LoadJson(stem + "-deployment.json");
      const wb::BuildResult built =
          wb::BuildBackendPodGroup(b, deployment, ConfigOf(deployment), ReplicaSet(), Facts());
      INFO(built.error);
      REQUIRE(built.ok());
      CHECK(built.object == LoadJson(stem + "-podgroup.json"));
    }
  }
}

TEST_CASE("BuildBackendPodGroup: basic is minMember 1, defaults from the facts", "[backend]") {
  const json deployment = LoadJson("workloadbuilder/backends/basic-deployment.json");
  const json config = ConfigOf(deployment);
  wb::ClusterFacts facts;
  SECTION("volcano without a default queue leaves spec.queue out") {
    const auto built =
        wb::BuildBackendPodGroup(wb::Backend::kVolcano, deployment, config, ReplicaSet(), facts);
    REQUIRE(built.ok());
    CHECK(built.object["spec"] == json{{"minMember", 1}});
  }
  SECTION("volcano with --volcano-queue") {
    facts.volcano_queue = "batch";
    const auto built =
        wb::BuildBackendPodGroup(wb::Backend::kVolcano, deployment, config, ReplicaSet(), facts);
    REQUIRE(built.ok());
    CHECK(built.object["spec"] == json{{"minMember", 1}, {"queue", "batch"}});
  }
  SECTION("kai falls back to default-queue") {
    const auto built =
        wb::BuildBackendPodGroup(wb::Backend::kKai, deployment, config, ReplicaSet(), facts);
    REQUIRE(built.ok());
    CHECK(built.object["spec"] == json{{"minMember", 1}, {"queue", "default-queue"}});
  }
  SECTION("coscheduling") {
    const auto built = wb::BuildBackendPodGroup(wb::Backend::kCoscheduling, deployment, config,
                                                ReplicaSet(), facts);
    REQUIRE(built.ok());
    CHECK(built.object["spec"] == json{{"minMember", 1}});
    CHECK(built.object["apiVersion"] == "scheduling.x-k8s.io/v1alpha1");
  }
}

TEST_CASE("BuildBackendPodGroup: gang minMember follows replicas, 1 at zero", "[backend]") {
  json deployment = LoadJson("workloadbuilder/backends/coscheduling-deployment.json");
  const json config = ConfigOf(deployment);
  deployment["spec"]["replicas"] = 7;
  auto built =
      wb::BuildBackendPodGroup(wb::Backend::kCoscheduling, deployment, config, ReplicaSet(), {});
  REQUIRE(built.ok());
  CHECK(built.object["spec"]["minMember"] == 7);
  deployment["spec"]["replicas"] = 0;
  built =
      wb::BuildBackendPodGroup(wb::Backend::kCoscheduling, deployment, config, ReplicaSet(), {});
  REQUIRE(built.ok());
  CHECK(built.object["spec"]["minMember"] == 1);
}

TEST_CASE("BuildBackendPodGroup: Volcano tier by name, refusals", "[backend]") {
  const json deployment = LoadJson("workloadbuilder/backends/volcano-deployment.json");
  const json config = ConfigOf(deployment);
  wb::ClusterFacts facts;
  facts.volcano_tiers = {{"topology.kubernetes.io/zone", {std::nullopt, "zone-tier"}}};
  auto built =
      wb::BuildBackendPodGroup(wb::Backend::kVolcano, deployment, config, ReplicaSet(), facts);
  REQUIRE(built.ok());
  CHECK(built.object["spec"]["networkTopology"] ==
        json{{"mode", "hard"}, {"highestTierName", "zone-tier"}});

  facts.volcano_tiers.clear();
  built = wb::BuildBackendPodGroup(wb::Backend::kVolcano, deployment, config, ReplicaSet(), facts);
  CHECK_FALSE(built.ok());
  CHECK(built.object.is_null());
  CHECK_THAT(built.error, Catch::Contains("--volcano-topology-tiers"));

  CHECK_FALSE(
      wb::BuildBackendPodGroup(wb::Backend::kKai, deployment, config, ReplicaSet(), {}).ok());
  CHECK_FALSE(
      wb::BuildBackendPodGroup(wb::Backend::kNative, deployment, config, ReplicaSet(), Facts())
          .ok());
  json rs = ReplicaSet();
  rs["metadata"].erase("uid");
  CHECK_FALSE(
      wb::BuildBackendPodGroup(wb::Backend::kVolcano, deployment, config, rs, Facts()).ok());
  CHECK_FALSE(wb::BuildBackendPodGroup(wb::Backend::kVolcano, deployment, json::array(),
                                       ReplicaSet(), Facts())
                  .ok());
}

TEST_CASE("the native Workload never carries the backends block", "[backend]") {
  const json deployment = LoadJson("workloadbuilder/backends/volcano-deployment.json");
  const wb::BuildResult wl = wb::BuildWorkload(deployment, ConfigOf(deployment));
  REQUIRE(wl.ok());
  CHECK(wl.object.dump().find("backends") == std::string::npos);
  CHECK(wl.object.dump().find("inference\"") == std::string::npos);
}

TEST_CASE("LinkedPodGroupName reads the link of the pod's backend", "[backend]") {
  json pod = {{"metadata", {{"labels", json::object()}, {"annotations", json::object()}}},
              {"spec", json::object()}};
  CHECK(wb::LinkedPodGroupName(pod).empty());
  pod["spec"]["schedulingGroup"] = {{"podGroupName", "native-pg"}};
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "volcano-pg";
  pod["metadata"]["annotations"]["pod-group-name"] = "kai-pg";
  pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "cosched-pg";
  CHECK(wb::LinkedPodGroupName(pod) == "native-pg");  // no backend label: native
  pod["metadata"]["labels"]["wasd.io/backend"] = "native";
  CHECK(wb::LinkedPodGroupName(pod) == "native-pg");
  pod["metadata"]["labels"]["wasd.io/backend"] = "volcano";
  CHECK(wb::LinkedPodGroupName(pod) == "volcano-pg");
  pod["metadata"]["labels"]["wasd.io/backend"] = "kai";
  CHECK(wb::LinkedPodGroupName(pod) == "kai-pg");
  pod["metadata"]["labels"]["wasd.io/backend"] = "coscheduling";
  CHECK(wb::LinkedPodGroupName(pod) == "cosched-pg");
  pod["metadata"]["labels"]["wasd.io/backend"] = "yunikorn";
  CHECK(wb::LinkedPodGroupName(pod).empty());
  CHECK(wb::LinkedPodGroupName(json("not a pod")).empty());
  pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = 5;
  CHECK(wb::LinkedPodGroupName(pod, wb::Backend::kCoscheduling).empty());
}

TEST_CASE("SchedulerNameFor and BackendSettings", "[backend]") {
  wb::ClusterFacts facts;
  CHECK(wb::SchedulerNameFor(wb::Backend::kNative, facts).empty());
  CHECK(wb::SchedulerNameFor(wb::Backend::kVolcano, facts) == "volcano");
  CHECK(wb::SchedulerNameFor(wb::Backend::kCoscheduling, facts) == "scheduler-plugins-scheduler");
  facts.coscheduling_scheduler_name = "gang-scheduler";
  CHECK(wb::SchedulerNameFor(wb::Backend::kCoscheduling, facts) == "gang-scheduler");

  wb::BackendSettings s;
  CHECK(s.Allows(wb::Backend::kNative));
  CHECK_FALSE(s.Allows(wb::Backend::kKai));
  CHECK(s.AllowedNames() == std::vector<std::string>{"native"});
  s.allowed = {wb::Backend::kCoscheduling, wb::Backend::kVolcano};
  CHECK(s.AllowedNames() == std::vector<std::string>{"volcano", "coscheduling"});
}

TEST_CASE("the backends block: annotation only", "[backend]") {
  json deployment = LoadJson("workloadbuilder/kep-example-1-deployment.json");
  const json field = deployment["spec"]["scheduling"];

  SECTION("spec.scheduling may not hold it") {
    deployment["spec"]["scheduling"]["backends"] = {{"volcano", {{"queue", "q"}}}};
    const wb::SchedulingConfig c = wb::ReadInTreeSchedulingConfig(deployment);
    WASD_REQUIRE_ERRORS(c.errors, {{ET::kForbidden, "spec.scheduling.backends"}});
    CHECK(c.config == field);
  }
  SECTION("the annotation keeps it, whatever spec.scheduling says") {
    json annotation = field;
    annotation["backends"] = {{"volcano", {{"queue", "q"}}}};
    annotation.erase("disruptionMode");
    deployment["metadata"]["annotations"] = {{"wasd.io/scheduling", annotation.dump()}};
    const wb::SchedulingConfig c = wb::ReadSchedulingConfig(deployment);
    CHECK(c.errors.empty());
    CHECK(c.carrier == wb::Carrier::kAnnotation);
    CHECK(c.path.String() == kAnnotationPath);
    CHECK(c.config == annotation);
  }
}

TEST_CASE("DeploymentBackend: annotation, then template label, then the flag", "[backend]") {
  json d = LoadJson("workloadbuilder/backends/basic-deployment.json");
  CHECK(wb::DeploymentBackend(d, wb::Backend::kNative) == wb::Backend::kNative);
  CHECK(wb::DeploymentBackend(d, wb::Backend::kKai) == wb::Backend::kKai);
  d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "coscheduling";
  CHECK(wb::DeploymentBackend(d, wb::Backend::kKai) == wb::Backend::kCoscheduling);
  d["metadata"]["annotations"]["wasd.io/backend"] = "volcano";
  CHECK(wb::DeploymentBackend(d, wb::Backend::kKai) == wb::Backend::kVolcano);
  // Names that are no backend fall through (admission denies the annotation).
  d["metadata"]["annotations"]["wasd.io/backend"] = "slurm";
  CHECK(wb::DeploymentBackend(d, wb::Backend::kKai) == wb::Backend::kCoscheduling);
  d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = 7;
  CHECK(wb::DeploymentBackend(d, wb::Backend::kKai) == wb::Backend::kKai);
  CHECK(wb::DeploymentBackend(json("x"), wb::Backend::kVolcano) == wb::Backend::kVolcano);
}
