#include "workloadbuilder/backend.h"

#include <catch2/catch.hpp>

namespace wb = wasd::workloadbuilder;
using nlohmann::json;

TEST_CASE("every backend name parses back to its backend", "[backend]") {
  for (wb::Backend b : wb::kAllBackends) {
    const auto parsed = wb::ParseBackend(wb::BackendName(b));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == b);
    CHECK(wb::Info(b).backend == b);
  }
  CHECK_FALSE(wb::ParseBackend("Volcano").has_value());
  CHECK_FALSE(wb::ParseBackend("").has_value());
  CHECK_FALSE(wb::ParseBackend("yunikorn").has_value());
}

TEST_CASE("group versions and scheduler names per backend", "[backend]") {
  CHECK(wb::GroupVersion(wb::Backend::kNative) == "scheduling.k8s.io/v1beta1");
  CHECK(wb::GroupVersion(wb::Backend::kVolcano) == "scheduling.volcano.sh/v1beta1");
  CHECK(wb::GroupVersion(wb::Backend::kKai) == "scheduling.run.ai/v2alpha2");
  CHECK(wb::GroupVersion(wb::Backend::kCoscheduling) == "scheduling.x-k8s.io/v1alpha1");
  CHECK(wb::Info(wb::Backend::kNative).scheduler_name.empty());
  CHECK(wb::Info(wb::Backend::kVolcano).scheduler_name == "volcano");
  CHECK(wb::Info(wb::Backend::kKai).scheduler_name == "kai-scheduler");
  CHECK(wb::Info(wb::Backend::kCoscheduling).scheduler_name == "scheduler-plugins-scheduler");
  CHECK(wb::Info(wb::Backend::kNative).has_workload);
  CHECK_FALSE(wb::Info(wb::Backend::kKai).has_workload);
}

TEST_CASE("the backend label decides; absent means native", "[backend]") {
  CHECK(wb::BackendOfLabels(json()) == wb::Backend::kNative);
  CHECK(wb::BackendOfLabels(json::object()) == wb::Backend::kNative);
  CHECK(wb::BackendOfLabels(json{{"wasd.io/backend", "kai"}}) == wb::Backend::kKai);
  CHECK_FALSE(wb::BackendOfLabels(json{{"wasd.io/backend", "kueue"}}).has_value());
  CHECK(wb::BackendOfLabels(json{{"wasd.io/backend", 3}}) == wb::Backend::kNative);
}
