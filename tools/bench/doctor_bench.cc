// The gang doctor's cost (doctor/diagnosis.h) on a large, unschedulable gang:
// 1000 members pending, 1000 Nodes in 10 zones, 10000 pods bound to them.
// Prints the diagnosis and the mean time of one Diagnose() over 20 runs.
// Not a test: `cmake --build build --target doctor-bench && build/doctor-bench`.
#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "doctor/diagnosis.h"
#include "workloadbuilder/names.h"

namespace {

using nlohmann::json;

constexpr int kMembers = 1000;
constexpr int kNodes = 1000;
constexpr int kBound = 10000;
constexpr int kRuns = 20;

json Owner(const std::string& uid) { return json::array({{{"uid", uid}, {"controller", true}}}); }

wasd::doctor::GangInput Input() {
  wasd::doctor::GangInput in;
  const json config = {{"schedulingPolicy", {{"gang", {{"minCount", kMembers}}}}},
                       {"schedulingConstraints", {{"topology", json::array({{{"key", "zone"}}})}}}};
  in.deployment = {
      {"metadata",
       {{"name", "web"}, {"uid", "d"}, {"annotations", {{"wasd.io/scheduling", config.dump()}}}}},
      {"spec", {{"replicas", kMembers}}}};
  const json requests = {{"cpu", "500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}};
  const json spec = {
      {"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}}}}})}};
  in.replicasets = {{{"metadata",
                      {{"name", "web-a"},
                       {"uid", "rs"},
                       {"annotations", {{"deployment.kubernetes.io/revision", "1"}}}}},
                     {"spec", {{"template", {{"spec", spec}}}}}}};
  in.workload = {{"metadata", {{"name", "w"}, {"ownerReferences", Owner("d")}}}};
  in.group_objects = {{{"metadata",
                        {{"name", wasd::workloadbuilder::PodGroupName("web-a", "rs")},
                         {"ownerReferences", Owner("rs")}}},
                       {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", kMembers}}}}}}}}};
  for (int i = 0; i < kMembers; ++i) {
    in.pods.push_back({{"metadata",
                        {{"name", "p" + std::to_string(i)},
                         {"uid", "u" + std::to_string(i)},
                         {"creationTimestamp", "2026-12-02T06:00:00Z"},
                         {"ownerReferences", Owner("rs")}}},
                       {"status", {{"phase", "Pending"}}}});
  }
  const json allocatable = {
      {"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}};
  for (int i = 0; i < kNodes; ++i) {
    in.nodes.push_back({{"metadata",
                         {{"name", "n" + std::to_string(i)},
                          {"labels", {{"zone", "z" + std::to_string(i % 10)}}}}},
                        {"status", {{"allocatable", allocatable}}}});
  }
  // 10 pods per node, every second one with a GPU: 3 of 8 GPUs free per node.
  for (int i = 0; i < kBound; ++i) {
    json used = {{"cpu", "1"}};
    if (i % 2 == 0) used["nvidia.com/gpu"] = "1";
    in.bound_pods.push_back(
        {{"spec",
          {{"nodeName", "n" + std::to_string((i / 2) % kNodes)},
           {"containers", json::array({{{"resources", {{"requests", used}}}}})}}},
         {"status", {{"phase", "Running"}}}});
  }
  return in;
}

}  // namespace

int main() {
  const wasd::doctor::GangInput in = Input();
  std::string message;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRuns; ++r) message = wasd::doctor::Diagnose(in).message;
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  std::printf("%s\n%.2f ms per Diagnose (%d members, %d nodes, %d bound pods; mean of %d)\n",
              message.c_str(), took.count() / kRuns, kMembers, kNodes, kBound, kRuns);
  return 0;
}
