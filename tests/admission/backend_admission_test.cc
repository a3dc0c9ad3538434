// The webhook's backend paths (docs/design.md Q19) through Review(), both with
// the pruned decoder and the whole document: the pod link per backend (the
// patch applied to the pod gives the expected pod), the backend label the
// Deployment path stamps into the template, and the Deployment denials.
#include <catch2/catch.hpp>
#include <string>

#include "admission/review.h"
#include "tests/admission/review_fixtures.h"
#include "workloadbuilder/names.h"

using nlohmann::json;
using wasd::admission::Options;
using wasd::admission::Result;
using wasd::admission::Review;
using wasd::admission::Webhook;
namespace wb = wasd::workloadbuilder;

namespace {

json PodRequest(json pod) {
  json review = wasd::testing::ReviewOf(wasd::testing::kPods, "CREATE", std::move(pod));
  review["request"]["name"] = "";
  return review;
}

json Pod(const char* backend, json spec_extra = json::object(), json annotations = nullptr) {
  json labels = {{"app", "web"}, {"pod-template-hash", "5d8f7c9b6"}, {"wasd.io/managed", "true"}};
  if (backend != nullptr) labels["wasd.io/backend"] = backend;
  json spec = {{"containers", {{{"name", "c"}, {"image", "img:v1"}}}},
               {"schedulerName", "default-scheduler"}};
  spec.update(spec_extra);
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"generateName", "web-5d8f7c9b6-"},
                {"namespace", "ml"},
                {"labels", std::move(labels)},
                {"ownerReferences",
                 {{{"apiVersion", "apps/v1"},
                   {"kind", "ReplicaSet"},
                   {"name", "web-5d8f7c9b6"},
                   {"uid", "rs-uid"},
                   {"controller", true}}}}}},
              {"spec", std::move(spec)}};
  if (!annotations.is_null()) pod["metadata"]["annotations"] = std::move(annotations);
  return pod;
}

std::vector<Options> BothDecoders(const wb::BackendSettings& backends = {},
                                  const std::string& holds = "") {
  Options pruned;
  pruned.backends = backends;
  if (!holds.empty()) REQUIRE(wasd::admission::ParsePodHolds(holds, &pruned.pod_hold).empty());
  Options whole = pruned;
  whole.prune_unread_fields = false;
  return {pruned, whole};
}

json Mutated(const json& pod, const Options& options) {
  const Result r = Review(Webhook::kMutatePod, PodRequest(pod).dump(), options);
  return wasd::testing::PatchedBy(wasd::testing::ResponseOf(r), pod);
}

const std::string kGroup = wb::PodGroupName("web-5d8f7c9b6", "rs-uid");
const json kGate = json::array({{{"name", "wasd.io/pod-group"}}});

}  // namespace

TEST_CASE("pod mutation per backend: link, gate, scheduler", "[unit][backend]") {
  wb::BackendSettings backends;
  backends.facts.coscheduling_scheduler_name = "gang-scheduler";
  // Every backend in gate mode (--pod-hold): the gate on every linked pod.
  for (const Options& options :
       BothDecoders(backends, "native=gate,volcano=gate,kai=gate,coscheduling=gate")) {
    INFO("pruned " << options.prune_unread_fields);
    SECTION("native (and no label): link and gate") {
      for (const char* label : {static_cast<const char*>(nullptr), "native"}) {
        const json pod = Pod(label);
        json want = pod;
        want["spec"]["schedulingGroup"] = {{"podGroupName", kGroup}};
        want["spec"]["schedulingGates"] = kGate;
        CHECK(Mutated(pod, options) == want);
      }
    }
    SECTION("volcano: annotation, gate, schedulerName volcano") {
      const json pod = Pod("volcano", json::object(), {{"team", "a"}});
      json want = pod;
      want["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = kGroup;
      want["spec"]["schedulingGates"] = kGate;
      want["spec"]["schedulerName"] = "volcano";
      CHECK(Mutated(pod, options) == want);
    }
    SECTION("kai: two annotations (map created), gate, kai-scheduler") {
      const json pod = Pod("kai");
      json want = pod;
      want["metadata"]["annotations"] = {{"pod-group-name", kGroup},
                                         {"kai.scheduler/skip-podgrouper", "true"}};
      want["spec"]["schedulingGates"] = kGate;
      want["spec"]["schedulerName"] = "kai-scheduler";
      CHECK(Mutated(pod, options) == want);
    }
    SECTION("coscheduling: label, gate, the configured scheduler") {
      const json pod = Pod("coscheduling");
      json want = pod;
      want["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = kGroup;
      want["spec"]["schedulingGates"] = kGate;
      want["spec"]["schedulerName"] = "gang-scheduler";
      CHECK(Mutated(pod, options) == want);
    }
    SECTION("a pod naming its own scheduler keeps it") {
      const json pod = Pod("volcano", {{"schedulerName", "volcano"}});
      CHECK(Mutated(pod, options)["spec"]["schedulerName"] == "volcano");
      json no_scheduler = Pod("kai");
      no_scheduler["spec"].erase("schedulerName");
      CHECK(Mutated(no_scheduler, options)["spec"]["schedulerName"] == "kai-scheduler");
    }
    SECTION("a pod already linked is left alone") {
      for (const json& pod :
           {Pod("volcano", json::object(), {{"scheduling.k8s.io/group-name", "mine"}}),
            Pod("kai", json::object(), {{"pod-group-name", "mine"}})}) {
        const Result r = Review(Webhook::kMutatePod, PodRequest(pod).dump(), options);
        CHECK_FALSE(wasd::testing::ResponseOf(r).contains("patch"));
      }
      json cos = Pod("coscheduling");
      cos["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "mine";
      const Result r = Review(Webhook::kMutatePod, PodRequest(cos).dump(), options);
      CHECK_FALSE(wasd::testing::ResponseOf(r).contains("patch"));
    }
    SECTION("a label naming no backend is refused, never scheduled pod by pod") {
      const Result r = Review(Webhook::kMutatePod, PodRequest(Pod("slurm")).dump(), options);
      const json resp = wasd::testing::ResponseOf(r);
      CHECK(resp["allowed"] == false);
      CHECK(resp["status"]["message"] ==
            "metadata.labels[wasd.io/backend]: Unsupported value: \"slurm\": supported values: "
            "\"native\", \"volcano\", \"kai\", \"coscheduling\"");
    }
  }
}

TEST_CASE("pod mutation, native without the Workload API (Q23): always the gate",
          "[unit][backend]") {
  wb::BackendSettings backends;
  // native_api_served false: not served, or not known yet (discovery failed,
  // not answered): the link would not survive admission, so the gate.
  for (Options options : BothDecoders(backends)) {
    INFO("pruned " << options.prune_unread_fields);
    REQUIRE_FALSE(options.native_api_served);
    for (const char* label : {static_cast<const char*>(nullptr), "native"}) {
      const json pod = Pod(label);
      json want = pod;
      want["spec"]["schedulingGroup"] = {{"podGroupName", kGroup}};
      want["spec"]["schedulingGates"] = kGate;
      CHECK(Mutated(pod, options) == want);
      CHECK(Review(Webhook::kMutatePod, PodRequest(pod).dump(), options).summary.hold == "gate");
    }
    // Volcano and KAI read their own link, which the API server keeps: unchanged.
    CHECK_FALSE(Mutated(Pod("volcano"), options)["spec"].contains("schedulingGates"));
    // Served: the scheduler hold.
    options.native_api_served = true;
    CHECK_FALSE(Mutated(Pod("native"), options)["spec"].contains("schedulingGates"));
  }
}

TEST_CASE("pod mutation, scheduler hold (Q23): link without the gate", "[unit][backend]") {
  wb::BackendSettings backends;
  backends.facts.coscheduling_scheduler_name = "gang-scheduler";
  // The defaults: native, volcano and kai held by their scheduler; coscheduling gated.
  for (Options options : BothDecoders(backends)) {
    options.native_api_served = true;  // the Workload API discovered as served
    INFO("pruned " << options.prune_unread_fields);
    SECTION("native: the link only; summary says scheduler") {
      for (const char* label : {static_cast<const char*>(nullptr), "native"}) {
        const json pod = Pod(label);
        json want = pod;
        want["spec"]["schedulingGroup"] = {{"podGroupName", kGroup}};
        CHECK(Mutated(pod, options) == want);
        CHECK(Review(Webhook::kMutatePod, PodRequest(pod).dump(), options).summary.hold ==
              "scheduler");
      }
      json unnamed = Pod("native");
      unnamed["spec"].erase("schedulerName");
      CHECK_FALSE(Mutated(unnamed, options)["spec"].contains("schedulingGates"));
    }
    SECTION("volcano and kai: the link and their scheduler, no gate") {
      const json vc = Mutated(Pod("volcano"), options);
      CHECK(vc["spec"]["schedulerName"] == "volcano");
      CHECK_FALSE(vc["spec"].contains("schedulingGates"));
      const json kai = Mutated(Pod("kai", {{"schedulerName", "kai-scheduler"}}), options);
      CHECK(kai["metadata"]["annotations"]["pod-group-name"] == kGroup);
      CHECK_FALSE(kai["spec"].contains("schedulingGates"));
    }
    SECTION("coscheduling: gate by default") {
      const json cos = Mutated(Pod("coscheduling"), options);
      CHECK(cos["spec"]["schedulingGates"] == kGate);
      CHECK(Review(Webhook::kMutatePod, PodRequest(Pod("coscheduling")).dump(), options)
                .summary.hold == "gate");
    }
    SECTION("a pod sent to another scheduler keeps the gate") {
      for (const json& pod : {Pod("native", {{"schedulerName", "my-scheduler"}}),
                              Pod("volcano", {{"schedulerName", "my-scheduler"}}),
                              Pod("kai", {{"schedulerName", "volcano"}})}) {
        INFO(pod.dump());
        CHECK(Mutated(pod, options)["spec"]["schedulingGates"] == kGate);
        CHECK(Review(Webhook::kMutatePod, PodRequest(pod).dump(), options).summary.hold == "gate");
      }
    }
    SECTION("--pod-scheduling-gate=false: no gate in gate mode either") {
      Options off = options;
      off.pod_scheduling_gate = false;
      const Result r = Review(Webhook::kMutatePod, PodRequest(Pod("coscheduling")).dump(), off);
      CHECK_FALSE(
          wasd::testing::PatchedBy(wasd::testing::ResponseOf(r), Pod("coscheduling"))["spec"]
              .contains("schedulingGates"));
      CHECK(r.summary.hold == "none");
    }
  }
}

TEST_CASE("--pod-hold parses BACKEND=MODE pairs", "[unit][backend]") {
  using wasd::admission::ParsePodHolds;
  using wasd::admission::PodHold;
  using wasd::admission::PodHolds;
  PodHolds h;
  CHECK(h.Text() == "native=scheduler,volcano=scheduler,kai=scheduler,coscheduling=gate");
  CHECK(ParsePodHolds("volcano=gate,coscheduling=scheduler", &h).empty());
  CHECK(h.For(wb::Backend::kVolcano) == PodHold::kGate);
  CHECK(h.For(wb::Backend::kCoscheduling) == PodHold::kScheduler);
  CHECK(h.For(wb::Backend::kNative) == PodHold::kScheduler);  // not named: kept
  const std::string want =
      "want BACKEND=MODE pairs separated by commas, BACKEND one of native, volcano, kai, "
      "coscheduling, MODE scheduler or gate";
  for (const char* bad :
       {"", "native", "native=", "native=never", "slurm=gate", "native=gate,", ",native=gate"}) {
    INFO(bad);
    const PodHolds before = h;
    const std::string err = ParsePodHolds(bad, &h);
    CHECK(err.find(want) != std::string::npos);
    CHECK(h.Text() == before.Text());
  }
  CHECK(ParsePodHolds("kai=gate,kai=scheduler", &h) ==
        "\"kai=scheduler\": backend kai given twice");
}

namespace {

json DeploymentRequest(const std::string& op, json object, json old_object = nullptr) {
  return wasd::testing::ReviewOf(wasd::testing::kDeployments, op, std::move(object),
                                 std::move(old_object));
}

json Scheduled(const char* backend = nullptr) {
  json annotations = {{"wasd.io/scheduling", R"({"schedulingPolicy":{"gang":{}}})"}};
  if (backend != nullptr) annotations["wasd.io/backend"] = backend;
  return wasd::testing::WebDeployment(annotations);
}

}  // namespace

TEST_CASE("the Deployment path stamps the resolved backend into the template", "[unit][backend]") {
  wb::BackendSettings backends;
  backends.backend = wb::Backend::kKai;
  backends.allowed = {wb::Backend::kKai, wb::Backend::kVolcano};
  for (const Options& options : BothDecoders(backends)) {
    const auto mutate = [&](const std::string& op, const json& d, const json& old = nullptr) {
      const Result r =
          Review(Webhook::kMutateDeployment, DeploymentRequest(op, d, old).dump(), options);
      return wasd::testing::PatchedBy(wasd::testing::ResponseOf(r), d);
    };
    // CREATE: the annotation, else --backend.
    json out = mutate("CREATE", Scheduled("volcano"));
    CHECK(out["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] == "volcano");
    CHECK(out["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] == "true");
    out = mutate("CREATE", Scheduled());
    CHECK(out["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] == "kai");
    // A user's own label value is overwritten with the resolved one.
    json own = Scheduled("volcano");
    own["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "native";
    CHECK(mutate("CREATE", own)["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] ==
          "volcano");
    // No template labels map at all.
    json bare = Scheduled();
    bare["spec"]["template"]["metadata"].erase("labels");
    CHECK(mutate("CREATE", bare)["spec"]["template"]["metadata"]["labels"] ==
          json{{"wasd.io/managed", "true"}, {"wasd.io/backend", "kai"}});
    // Native (annotation or flag) is not stamped: absent means native. A
    // label the user set is corrected to native.
    json native = Scheduled("native");
    CHECK_FALSE(mutate("CREATE", native)["spec"]["template"]["metadata"]["labels"].contains(
        "wasd.io/backend"));
    native["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "kai";
    CHECK(mutate("CREATE", native)["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] ==
          "native");
    // No carrier: no label.
    const json plain = wasd::testing::WebDeployment();
    CHECK_FALSE(mutate("CREATE", plain)["spec"]["template"]["metadata"]["labels"].contains(
        "wasd.io/backend"));

    // UPDATE: the stored value stays, whatever --backend says now.
    json stored = mutate("CREATE", Scheduled());  // kai
    json applied = Scheduled();                   // a re-apply without our labels
    applied["spec"]["template"]["spec"]["containers"][0]["image"] = "img:v2";
    out = mutate("UPDATE", applied, stored);
    CHECK(out["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] == "kai");
    // A Deployment from before backends (no label): stays unlabelled (native).
    json legacy = Scheduled();
    legacy["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] = "true";
    out = mutate("UPDATE", applied, legacy);
    CHECK_FALSE(out["spec"]["template"]["metadata"]["labels"].contains("wasd.io/backend"));
    // An UPDATE that leaves the template alone does not touch it.
    const Result same = Review(Webhook::kMutateDeployment,
                               DeploymentRequest("UPDATE", stored, stored).dump(), options);
    CHECK_FALSE(wasd::testing::ResponseOf(same).contains("patch"));
  }
}

TEST_CASE("the Deployment path denies what the backend cannot do", "[unit][backend]") {
  wb::BackendSettings backends;
  backends.backend = wb::Backend::kVolcano;
  backends.allowed = {wb::Backend::kVolcano, wb::Backend::kCoscheduling};
  for (const Options& options : BothDecoders(backends)) {
    const auto verdict = [&](const std::string& op, const json& d, const json& old = nullptr) {
      return wasd::testing::ResponseOf(
          Review(Webhook::kValidateDeployment, DeploymentRequest(op, d, old).dump(), options));
    };
    CHECK(verdict("CREATE", Scheduled("coscheduling"))["allowed"] == true);
    json resp = verdict("CREATE", Scheduled("kai"));
    CHECK(resp["allowed"] == false);
    CHECK(resp["status"]["details"]["causes"][0]["field"] ==
          "metadata.annotations[wasd.io/backend]");
    json third = Scheduled("coscheduling");
    third["spec"]["template"]["spec"]["schedulerName"] = "volcano";
    resp = verdict("CREATE", third);
    CHECK(resp["status"]["message"] ==
          "spec.template.spec.schedulerName: Unsupported value: \"volcano\": supported values: "
          "\"default-scheduler\", \"scheduler-plugins-scheduler\"");
    json mode = Scheduled();
    mode["metadata"]["annotations"]["wasd.io/scheduling"] =
        R"({"schedulingPolicy":{"gang":{}},"disruptionMode":{"all":{}}})";
    resp = verdict("CREATE", mode);
    CHECK(resp["status"]["message"] ==
          "metadata.annotations[wasd.io/scheduling].disruptionMode: Forbidden: not supported by "
          "backend \"volcano\"; remove it or use backend \"native\" or \"kai\"");
    resp = verdict("UPDATE", Scheduled("coscheduling"), Scheduled("volcano"));
    CHECK(resp["allowed"] == false);
    // The annotation and, with it, the template's backend (a list of two).
    CHECK_THAT(resp["status"]["message"].get<std::string>(),
               Catch::StartsWith("[metadata.annotations[wasd.io/backend]: Forbidden: field is "
                                 "immutable"));
    CHECK(resp["status"]["details"]["causes"][1]["field"] ==
          "spec.template.metadata.labels[wasd.io/backend]");
  }
}

TEST_CASE("M2: a non-native backend's scheduler is written into the pod template",
          "[unit][backend]") {
  // KAI's own pod webhook matches only pods that already name kai-scheduler
  // when they arrive; the pod webhook's schedulerName comes too late for it.
  wb::BackendSettings backends;
  backends.backend = wb::Backend::kKai;
  backends.allowed = {wb::kAllBackends.begin(), wb::kAllBackends.end()};
  backends.facts.coscheduling_scheduler_name = "gang-scheduler";
  for (const Options& options : BothDecoders(backends)) {
    INFO("pruned " << options.prune_unread_fields);
    const auto mutate = [&](const std::string& op, const json& d, const json& old = nullptr) {
      const Result r =
          Review(Webhook::kMutateDeployment, DeploymentRequest(op, d, old).dump(), options);
      return wasd::testing::PatchedBy(wasd::testing::ResponseOf(r), d);
    };
    const auto scheduler = [](const json& d) -> json {
      const json& spec = d["spec"]["template"]["spec"];
      return spec.contains("schedulerName") ? spec["schedulerName"] : json();
    };
    const auto with_scheduler = [](json d, const char* name) {
      d["spec"]["template"]["spec"]["schedulerName"] = name;
      return d;
    };
    // CREATE, the template leaves the choice to the default: the backend's scheduler.
    CHECK(scheduler(mutate("CREATE", Scheduled())) == "kai-scheduler");  // --backend kai
    CHECK(scheduler(mutate("CREATE", with_scheduler(Scheduled(), "default-scheduler"))) ==
          "kai-scheduler");
    CHECK(scheduler(mutate("CREATE", with_scheduler(Scheduled("kai"), ""))) == "kai-scheduler");
    CHECK(scheduler(mutate("CREATE", Scheduled("volcano"))) == "volcano");
    CHECK(scheduler(mutate("CREATE", Scheduled("coscheduling"))) == "gang-scheduler");
    // Native keeps what it had (absent stays absent).
    CHECK(scheduler(mutate("CREATE", Scheduled("native"))).is_null());
    CHECK(scheduler(mutate("CREATE", with_scheduler(Scheduled("native"), "default-scheduler"))) ==
          "default-scheduler");
    // Another name is left to the validating webhook (it denies a third scheduler).
    CHECK(scheduler(mutate("CREATE", with_scheduler(Scheduled(), "my-scheduler"))) ==
          "my-scheduler");
    // No carrier: nothing.
    CHECK(scheduler(mutate("CREATE", wasd::testing::WebDeployment())).is_null());

    // UPDATE: only when the template changes anyway (no rollout for this alone).
    json stored = Scheduled("kai");
    stored["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] = "true";
    stored["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "kai";
    stored["metadata"]["labels"]["wasd.io/managed"] = "true";
    const Result same = Review(Webhook::kMutateDeployment,
                               DeploymentRequest("UPDATE", stored, stored).dump(), options);
    CHECK_FALSE(wasd::testing::ResponseOf(same).contains("patch"));
    json rolled = stored;
    rolled["spec"]["template"]["spec"]["containers"][0]["image"] = "img:v2";
    CHECK(scheduler(mutate("UPDATE", rolled, stored)) == "kai-scheduler");
  }
}

TEST_CASE("M5: the template's backend label cannot move a Deployment to another scheduler",
          "[unit][backend]") {
  wb::BackendSettings backends;  // --backend native
  backends.allowed = {wb::kAllBackends.begin(), wb::kAllBackends.end()};
  for (const Options& options : BothDecoders(backends)) {
    INFO("pruned " << options.prune_unread_fields);
    const auto request = [&](Webhook w, const json& d, const json& old) {
      return wasd::testing::ResponseOf(
          Review(w, DeploymentRequest("UPDATE", d, old).dump(), options));
    };
    // A native Deployment (no label, the webhook stamps none), then an
    // UPDATE that adds the label, as a re-applied exported manifest would.
    json stored = Scheduled();
    stored["metadata"]["labels"]["wasd.io/managed"] = "true";
    stored["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"] = "true";
    for (const char* value : {"kai", "bogus"}) {
      INFO(value);
      json moved = stored;
      moved["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = value;
      // Mutating: forced back to the stored backend (native), no kai scheduler.
      const json mutated =
          wasd::testing::PatchedBy(request(Webhook::kMutateDeployment, moved, stored), moved);
      CHECK(mutated["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] == "native");
      CHECK_FALSE(mutated["spec"]["template"]["spec"].contains("schedulerName"));
      // Validating (had the mutating webhook not run): denied, even though
      // replicas, strategy and the config are unchanged (no ratchet).
      const json resp = request(Webhook::kValidateDeployment, moved, stored);
      CHECK(resp["allowed"] == false);
      bool on_label = false;
      for (const json& cause : resp["status"]["details"]["causes"]) {
        on_label = on_label || cause["field"] == "spec.template.metadata.labels[wasd.io/backend]";
      }
      CHECK(on_label);
      const std::string message = resp["status"]["message"].get<std::string>();
      if (std::string(value) == "kai") {
        CHECK_THAT(message, Catch::Contains("spec.template.metadata.labels[wasd.io/backend]: "
                                            "Forbidden: field is immutable"));
        CHECK_THAT(message, Catch::Contains("runs on backend \"native\""));
      } else {
        CHECK_THAT(message, Catch::Contains("spec.template.metadata.labels[wasd.io/backend]: "
                                            "Unsupported value: \"bogus\""));
      }
    }
    // A Deployment stamped volcano stays volcano when the label is changed.
    json volcano = stored;
    volcano["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "volcano";
    json moved = volcano;
    moved["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "kai";
    CHECK(wasd::testing::PatchedBy(
              request(Webhook::kMutateDeployment, moved, volcano),
              moved)["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] == "volcano");
    CHECK(request(Webhook::kValidateDeployment, moved, volcano)["allowed"] == false);
    // The same value written out ("native" where there was none) is no change.
    json same = stored;
    same["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "native";
    CHECK(request(Webhook::kValidateDeployment, same, stored)["allowed"] == true);
  }
}

TEST_CASE("M5: the template's backend label must name an allowed backend", "[unit][backend]") {
  wb::BackendSettings backends;  // --backend native, native only
  for (const Options& options : BothDecoders(backends)) {
    json d = Scheduled();
    d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "kai";
    const json resp = wasd::testing::ResponseOf(
        Review(Webhook::kValidateDeployment, DeploymentRequest("CREATE", d).dump(), options));
    CHECK(resp["allowed"] == false);
    CHECK_THAT(resp["status"]["message"].get<std::string>(),
               Catch::StartsWith("spec.template.metadata.labels[wasd.io/backend]: Forbidden: "
                                 "backend \"kai\" is not enabled in this cluster "
                                 "(--allowed-backends: native)"));
  }
}
