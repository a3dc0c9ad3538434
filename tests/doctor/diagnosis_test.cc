// doctor/diagnosis.h: one table case per reason, the counts, the timeline and
// the fit arithmetic.
#include "doctor/diagnosis.h"

#include <catch2/catch.hpp>

#include "workloadbuilder/names.h"

namespace wasd::doctor {
namespace {

using nlohmann::json;

const std::string kRsName = "web-aaaa";
const std::string kRsUid = "rs-a";
const std::string kGroup = workloadbuilder::PodGroupName(kRsName, kRsUid);
constexpr const char* kZone = "topology.kubernetes.io/zone";

json Config(int min_count, const std::string& topology_key = "") {
  json c = {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}};
  if (!topology_key.empty()) {
    c["schedulingConstraints"] = {{"topology", json::array({{{"key", topology_key}}})}};
  }
  return c;
}

// A KAI gang as KAI can keep it: disruptionMode all, minCount from replicas.
json KaiConfig(const std::string& topology_key = "") {
  json c = {{"schedulingPolicy", {{"gang", json::object()}}},
            {"disruptionMode", {{"all", json::object()}}}};
  if (!topology_key.empty()) {
    c["schedulingConstraints"] = {{"topology", json::array({{{"key", topology_key}}})}};
  }
  return c;
}

json PodSpec(const json& requests = {{"cpu", "1"}}, const json& extra = json::object()) {
  json spec = {{"containers", json::array({{{"name", "app"},
                                            {"image", "app:1"},
                                            {"resources", {{"requests", requests}}}}})}};
  spec.update(extra);
  return spec;
}

json Deployment(int replicas, const json& config, const std::string& backend = "") {
  json labels = {{"app", "web"}};
  if (!backend.empty()) labels["wasd.io/backend"] = backend;
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", "web"},
            {"namespace", "ns"},
            {"uid", "dep-1"},
            {"labels", {{"wasd.io/managed", "true"}}},  // as the webhook admitted it
            {"annotations", {{"wasd.io/scheduling", config.dump()}}}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", "web"}}}}},
            {"template", {{"metadata", {{"labels", labels}}}, {"spec", PodSpec()}}}}}};
}

json ReplicaSet(const json& pod_spec = PodSpec(), const std::string& name = kRsName,
                const std::string& uid = kRsUid, int revision = 1) {
  return {{"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"uid", uid},
            {"annotations", {{"deployment.kubernetes.io/revision", std::to_string(revision)}}},
            {"ownerReferences", json::array({{{"kind", "Deployment"},
                                              {"name", "web"},
                                              {"uid", "dep-1"},
                                              {"controller", true}}})}}},
          {"spec", {{"template", {{"spec", pod_spec}}}}}};
}

json Pod(const std::string& name, json gates = json::array(), const std::string& node = "",
         const std::string& rs_uid = kRsUid) {
  json p = {{"metadata",
             {{"name", name},
              {"namespace", "ns"},
              {"uid", "uid-" + name},
              {"creationTimestamp", "2026-12-02T06:00:0" + name.substr(name.size() - 1) + "Z"},
              {"ownerReferences", json::array({{{"kind", "ReplicaSet"},
                                                {"name", kRsName},
                                                {"uid", rs_uid},
                                                {"controller", true}}})}}},
            {"spec", {{"schedulingGates", std::move(gates)}}},
            {"status", {{"phase", "Pending"}}}};
  if (!node.empty()) {
    p["spec"]["nodeName"] = node;
    p["status"] = {{"phase", "Running"},
                   {"startTime", "2026-12-02T06:01:00Z"},
                   {"conditions", json::array({{{"type", "PodScheduled"},
                                                {"status", "True"},
                                                {"lastTransitionTime", "2026-12-02T06:00:30Z"}}})}};
  }
  return p;
}

json Gate(const std::string& name) { return json::array({{{"name", name}}}); }

json NativeGroup(int min_count, json conditions = json::array(),
                 const std::string& owner_uid = kRsUid) {
  return {{"metadata",
           {{"name", kGroup},
            {"namespace", "ns"},
            {"ownerReferences", json::array({{{"kind", "ReplicaSet"},
                                              {"name", kRsName},
                                              {"uid", owner_uid},
                                              {"controller", true}}})}}},
          {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}}},
          {"status", {{"conditions", std::move(conditions)}}}};
}

json Cond(const std::string& status, const std::string& reason, const std::string& message) {
  return json::array({{{"type", "PodGroupInitiallyScheduled"},
                       {"status", status},
                       {"reason", reason},
                       {"message", message}}});
}

json Node(const std::string& name, const std::string& zone, const json& allocatable,
          const json& extra_spec = json::object()) {
  json labels = {{"kubernetes.io/hostname", name}};
  if (!zone.empty()) labels[kZone] = zone;
  return {{"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", extra_spec},
          {"status", {{"allocatable", allocatable}}}};
}

json BoundPod(const std::string& node, const json& requests, const std::string& phase = "Running") {
  return {
      {"metadata", {{"name", "other-" + node}, {"namespace", "other"}}},
      {"spec",
       {{"nodeName", node},
        {"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}}}}})}}},
      {"status", {{"phase", phase}}}};
}

// A native gang of `replicas` with minCount `min_count` and its Workload.
GangInput Native(int replicas, int min_count) {
  GangInput in;
  in.deployment = Deployment(replicas, Config(min_count));
  in.replicasets = {ReplicaSet()};
  in.group_objects = {NativeGroup(min_count)};
  in.workload = {{"metadata",
                  {{"name", "web-wl"},
                   {"ownerReferences", json::array({{{"kind", "Deployment"},
                                                     {"name", "web"},
                                                     {"uid", "dep-1"},
                                                     {"controller", true}}})}}}};
  return in;
}

TEST_CASE("one reason per situation, in dominance order", "[doctor]") {
  SECTION("InvalidSchedulingConfiguration: not opted in, bad intent, unknown backend") {
    GangInput in = Native(4, 4);
    in.deployment["metadata"].erase("annotations");
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kInvalidSchedulingConfiguration);
    CHECK_FALSE(d.scheduled);

    in = Native(4, 4);
    in.deployment["metadata"]["annotations"]["wasd.io/scheduling"] = "{\"schedulingPolicy\": 3}";
    d = Diagnose(in);
    CHECK(d.reason == kInvalidSchedulingConfiguration);
    CHECK_THAT(d.message, Catch::Contains("schedulingPolicy"));

    in = Native(4, 4);
    in.deployment["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "yunikorn";
    d = Diagnose(in);
    CHECK(d.reason == kInvalidSchedulingConfiguration);
    CHECK_THAT(d.message, Catch::Contains("\"yunikorn\""));
  }
  SECTION("APINotAvailable") {
    GangInput in = Native(4, 4);
    in.deployment = Deployment(4, Config(4), "volcano");
    in.api_served = false;
    // The words follow each pod's own hold: one gated, one linked for volcano's
    // scheduler, one with neither.
    in.pods = {Pod("p1", Gate("wasd.io/pod-group")), Pod("p2"), Pod("p3")};
    in.pods[1]["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "g";
    in.pods[1]["spec"]["schedulerName"] = "volcano";
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kAPINotAvailable);
    CHECK(d.message ==
          "the API scheduling.volcano.sh/v1beta1 podgroups of backend volcano is not served: 1 "
          "pod(s) stay gated by wasd (scheduling gate wasd.io/pod-group); 1 pod(s) are held by "
          "volcano until their group exists; 1 pod(s) carry neither a gate nor a group link: "
          "nothing holds them, so they are scheduled one by one");
    CHECK(d.next_step ==
          "install volcano or choose another backend with the annotation wasd.io/backend");
    // The members that exist are counted for an early reason too.
    CHECK(d.counts.created == 3);
    in.pods = {Pod("p1", Gate("wasd.io/pod-group")), Pod("p2", Gate("wasd.io/pod-group"))};
    const Diagnosis with_pods = Diagnose(in);
    CHECK(with_pods.reason == kAPINotAvailable);
    CHECK(with_pods.counts.created == 2);
    CHECK(with_pods.counts.gated_wasd == 2);
    CHECK(with_pods.timeline.size() == 4);  // each pod: created, gated
  }
  SECTION("UnsupportedProviderCapability: topology on coscheduling") {
    GangInput in = Native(4, 4);
    in.deployment = Deployment(4, Config(4, kZone), "coscheduling");
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kUnsupportedProviderCapability);
    CHECK_THAT(d.message, Catch::Contains("schedulingConstraints.topology"));
  }
  SECTION("NotAdmitted: the annotation without the webhook's marker label") {
    GangInput in = Native(4, 4);
    in.workload = nullptr;
    in.group_objects.clear();
    in.deployment["metadata"].erase("labels");
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kNotAdmitted);
    CHECK_FALSE(d.scheduled);
    CHECK_THAT(d.message, Catch::StartsWith("Deployment web has the annotation wasd.io/scheduling "
                                            "but not the label wasd.io/managed=true"));
    CHECK_THAT(d.next_step, Catch::Contains("kubectl rollout restart deployment/web"));
    in.deployment["metadata"]["labels"] = {{"wasd.io/managed", "false"}};
    CHECK(Diagnose(in).reason == kNotAdmitted);
    // An unusable configuration still says so first; a marked one goes on.
    in.deployment["metadata"]["annotations"]["wasd.io/scheduling"] = "{";
    CHECK(Diagnose(in).reason == kInvalidSchedulingConfiguration);
    in = Native(4, 4);
    in.workload = nullptr;
    CHECK(Diagnose(in).reason == kPodGroupMissing);
  }
  SECTION("PodGroupMissing: the group object, or the native Workload") {
    GangInput in = Native(4, 4);
    in.group_objects.clear();
    in.pods = {Pod("p1", Gate("wasd.io/pod-group")), Pod("p2", Gate("wasd.io/pod-group"))};
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kPodGroupMissing);
    CHECK(d.message == "PodGroup " + kGroup +
                           " of ReplicaSet web-aaaa does not exist; "
                           "2/4 created, 2 gated by wasd, 0 bound, minCount 4");
    in = Native(4, 4);
    in.workload = nullptr;
    d = Diagnose(in);
    CHECK(d.reason == kPodGroupMissing);
    CHECK_THAT(d.message, Catch::StartsWith("Workload web-"));
    // Under the scheduler hold the members carry the link and no gate: the
    // message says who holds them, from the pods themselves.
    in = Native(4, 4);
    in.group_objects.clear();
    in.pods = {Pod("p1"), Pod("p2"), Pod("p3")};
    for (json& p : in.pods) p["spec"]["schedulingGroup"] = {{"podGroupName", kGroup}};
    in.pods[2]["spec"].erase("schedulingGroup");  // dropped by the API server: nothing holds it
    d = Diagnose(in);
    CHECK(d.reason == kPodGroupMissing);
    CHECK(d.message == "PodGroup " + kGroup +
                           " of ReplicaSet web-aaaa does not exist; "
                           "3/4 created, 0 gated by wasd, 0 bound, minCount 4; "
                           "2 pod(s) are held by default-scheduler until PodGroup " +
                           kGroup +
                           " exists; 1 pod(s) carry neither a gate nor a group link: nothing "
                           "holds them, so they are scheduled one by one");
  }
  SECTION("ForeignObject: the group object, or the native Workload") {
    GangInput in = Native(4, 4);
    in.group_objects = {NativeGroup(4, json::array(), "someone-else")};
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kForeignObject);
    CHECK(d.message == "PodGroup " + kGroup +
                           " is not controlled by ReplicaSet web-aaaa (controller: ReplicaSet "
                           "web-aaaa); wasd leaves it alone");
    CHECK(d.group_summary == "no status yet");  // read, though not wasd's
    in = Native(4, 4);
    in.workload["metadata"]["ownerReferences"][0]["uid"] = "another-deployment";
    in.workload["metadata"]["ownerReferences"][0]["name"] = "other";
    d = Diagnose(in);
    CHECK(d.reason == kForeignObject);
    CHECK(d.message ==
          "Workload web-wl is not controlled by Deployment web (controller: Deployment other); "
          "wasd leaves it alone");
    in.workload["metadata"].erase("ownerReferences");
    CHECK_THAT(Diagnose(in).message, Catch::Contains("(controller: none)"));
  }
  SECTION("a foreign PodGroup being deleted is PodGroupTerminating; the next step is true") {
    // Deleting it was ForeignObject's next step. wasd's gated members name it, so
    // podgroup-protection holds it; wasd releases it itself when only they do.
    GangInput in = Native(2, 2);
    in.group_objects = {NativeGroup(2, json::array(), "someone-else")};
    in.group_objects[0]["metadata"]["ownerReferences"][0]["name"] = "other";
    in.group_objects[0]["metadata"]["deletionTimestamp"] = "2026-12-02T06:00:00Z";
    in.group_objects[0]["metadata"]["finalizers"] = {"scheduling.k8s.io/podgroup-protection"};
    in.pods = {Pod("p1", Gate("wasd.io/pod-group")), Pod("p2", Gate("wasd.io/pod-group"))};
    for (json& pod : in.pods) pod["spec"]["schedulingGroup"]["podGroupName"] = kGroup;
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kPodGroupTerminating);
    CHECK(d.message == std::string("PodGroup ") + kGroup + " is not controlled by ReplicaSet " +
                           kRsName +
                           " (controller: ReplicaSet other) and is being deleted, held by "
                           "finalizers scheduling.k8s.io/podgroup-protection; 2/2 created, 2 "
                           "gated by wasd, 0 bound, minCount 2");
    CHECK(d.next_step ==
          "wait: only members that never ran name it, so wasd removes its "
          "scheduling.k8s.io/podgroup-protection finalizer (Event PodGroupReleased) and then "
          "creates its own; if it stays, pods outside this Deployment still name it (the "
          "reconciler's PodGroupTerminating Event names one): they must finish or be deleted");

    // A member that ran names it: wasd does not release it.
    in.pods[1] = Pod("p2", json::array(), "node-1");
    in.pods[1]["spec"]["schedulingGroup"]["podGroupName"] = kGroup;
    d = Diagnose(in);
    CHECK(d.reason == kPodGroupTerminating);
    CHECK(d.next_step ==
          "its deletion waits for the pods that name it: 1 member(s) that are bound or were "
          "scheduled must finish or be deleted (wasd releases it only while just members that "
          "never ran name it)");

    // A finalizer of someone else's: wasd never removes it.
    in.group_objects[0]["metadata"]["finalizers"] = {"example.com/keep",
                                                     "scheduling.k8s.io/podgroup-protection"};
    CHECK(Diagnose(in).next_step ==
          "its deletion waits for finalizers example.com/keep, which wasd never removes: whoever "
          "added them must remove them");

    // Nothing holds it (or no member names it): it goes by itself.
    in.group_objects[0]["metadata"].erase("finalizers");
    d = Diagnose(in);
    CHECK_THAT(d.message, Catch::Contains("(controller: ReplicaSet other) and is being deleted; "));
    CHECK(d.next_step == "wait for it to go; wasd then creates its own");

    // Not being deleted: ForeignObject, whose next step is to delete it.
    in.group_objects[0]["metadata"].erase("deletionTimestamp");
    d = Diagnose(in);
    CHECK(d.reason == kForeignObject);
    CHECK_THAT(d.next_step, Catch::StartsWith("delete the foreign PodGroup"));
  }
  SECTION("PodGroupTerminating") {
    GangInput in = Native(4, 4);
    in.group_objects[0]["metadata"]["deletionTimestamp"] = "2026-12-02T06:00:00Z";
    CHECK(Diagnose(in).reason == kPodGroupTerminating);
  }
  SECTION("WaitingForQuorum: fewer created than minCount, or still gated by wasd") {
    GangInput in = Native(4, 4);
    in.pods = {Pod("p1"), Pod("p2"), Pod("p3", Gate("wasd.io/pod-group"))};
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kWaitingForQuorum);
    CHECK(d.message == "3/4 created, 1 gated by wasd, 0 bound, minCount 4");
    CHECK(d.counts.created == 3);
    CHECK(d.counts.gated_wasd == 1);
    in.pods.push_back(Pod("p4", Gate("wasd.io/pod-group")));
    d = Diagnose(in);
    CHECK(d.reason == kWaitingForQuorum);
    CHECK_THAT(d.next_step, Catch::Contains("wasd lifts its gate"));
  }
  SECTION("GatedByOther: Kueue's admission gate") {
    GangInput in = Native(2, 2);
    in.pods = {Pod("p1", Gate("kueue.x-k8s.io/admission")),
               Pod("p2", Gate("kueue.x-k8s.io/admission"))};
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kGatedByOther);
    CHECK(d.message == "2/2 created, 0 gated by wasd, 2 gated by others, 0 bound, minCount 2");
    CHECK(d.counts.gated_other == 2);
  }
  SECTION("Unschedulable: the native condition, a FailedScheduling Event") {
    GangInput in = Native(2, 2);
    in.group_objects = {NativeGroup(2, Cond("False", "Unschedulable", "0/3 nodes are available"))};
    in.pods = {Pod("p1"), Pod("p2")};
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kUnschedulable);
    CHECK(d.message ==
          "2/2 created, 0 gated by wasd, 0 bound, minCount 2; scheduler: 0/3 nodes are available");
    CHECK(d.group_summary ==
          "PodGroupInitiallyScheduled=False (Unschedulable): 0/3 nodes are available");

    in = Native(2, 2);
    in.pods = {Pod("p1"), Pod("p2")};
    in.events = {{{"reason", "FailedScheduling"},
                  {"message", "old"},
                  {"lastTimestamp", "2026-12-02T06:00:01Z"},
                  {"involvedObject", {{"uid", "uid-p1"}}}},
                 {{"reason", "FailedScheduling"},
                  {"message", "new"},
                  {"lastTimestamp", "2026-12-02T06:00:09Z"},
                  {"involvedObject", {{"uid", "uid-p2"}}}},
                 {{"reason", "FailedScheduling"},
                  {"message", "someone else's pod"},
                  {"lastTimestamp", "2026-12-02T06:00:10Z"},
                  {"involvedObject", {{"uid", "uid-other"}}}}};
    d = Diagnose(in);
    CHECK(d.reason == kUnschedulable);
    CHECK(d.scheduler_said == "new");

    // A pending member's PodScheduled condition is its current state: it wins
    // over the Events, whatever their times.
    in.pods[0]["status"]["conditions"] =
        json::array({{{"type", "PodScheduled"},
                      {"status", "False"},
                      {"reason", "Unschedulable"},
                      {"message", "current"},
                      {"lastTransitionTime", "2026-12-02T06:00:05Z"}}});
    d = Diagnose(in);
    CHECK(d.scheduler_said == "current");
  }
  SECTION("QueueBlocked: a Volcano PodGroup still Pending, a KAI queue reason") {
    GangInput in = Native(2, 2);
    in.deployment = Deployment(2, Config(2), "volcano");
    in.workload = nullptr;
    in.group_objects = {
        {{"metadata",
          {{"name", kGroup},
           {"ownerReferences", json::array({{{"uid", kRsUid}, {"controller", true}}})}}},
         {"spec", {{"minMember", 2}}},
         {"status", {{"phase", "Pending"}}}}};
    in.pods = {Pod("p1"), Pod("p2")};
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kQueueBlocked);
    CHECK(d.message ==
          "2/2 created, 0 gated by wasd, 0 bound, minCount 2; the PodGroup is still Pending (not "
          "Inqueue) in Volcano queue default");
    in.group_objects[0]["spec"]["queue"] = "research";
    CHECK_THAT(Diagnose(in).message, Catch::EndsWith("in Volcano queue research"));

    in.deployment = Deployment(2, KaiConfig(), "kai");
    in.group_objects[0]["status"] = {
        {"schedulingConditions",
         json::array(
             {{{"type", "UnschedulableOnNodePool"},
               {"nodePool", "default"},
               {"reasons", json::array({{{"reason", "QueueDoesNotExist"},
                                         {"message", "queue team-a does not exist"}}})}}})}};
    d = Diagnose(in);
    CHECK(d.reason == kQueueBlocked);
    CHECK_THAT(d.message, Catch::EndsWith("QueueDoesNotExist: queue team-a does not exist"));
  }
  SECTION("ScaleUpPending: placed once, the new members are not") {
    GangInput in = Native(3, 2);
    in.group_objects = {NativeGroup(2, Cond("True", "Scheduled", ""))};
    in.pods = {Pod("p1", json::array(), "n1"), Pod("p2", json::array(), "n1"), Pod("p3")};
    in.events = {{{"reason", "FailedScheduling"},
                  {"message", "0/1 nodes are available: 1 Insufficient cpu"},
                  {"involvedObject", {{"uid", "uid-p3"}}}}};
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kScaleUpPending);
    CHECK(d.message ==
          "3/3 created, 0 gated by wasd, 2 bound, minCount 2; the gang was placed, 1 newer "
          "members are not; scheduler: 0/1 nodes are available: 1 Insufficient cpu");
  }
  SECTION("WaitingForQuorum: placed, fewer than minCount bound yet (binding)") {
    GangInput in = Native(3, 3);
    in.group_objects = {NativeGroup(3, Cond("True", "Scheduled", ""))};
    in.pods = {Pod("p1", json::array(), "n1"), Pod("p2"), Pod("p3")};
    in.events = {{{"reason", "FailedScheduling"},
                  {"message", "waiting for the pod group"},
                  {"involvedObject", {{"uid", "uid-p3"}}}}};
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kWaitingForQuorum);
    CHECK(d.message ==
          "3/3 created, 0 gated by wasd, 1 bound, minCount 3; the scheduler placed the gang and "
          "is binding its members");
  }
  SECTION("Scheduled") {
    GangInput in = Native(2, 2);
    in.pods = {Pod("p1", json::array(), "n1"), Pod("p2", json::array(), "n2")};
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kScheduled);
    CHECK(d.scheduled);
    CHECK(d.counts.running == 2);
    CHECK(ToJson(d)["status"] == "True");
  }
  SECTION("WaitingForQuorum: ungated, unbound, and no word from the scheduler") {
    GangInput in = Native(2, 2);
    in.pods = {Pod("p1"), Pod("p2")};
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kWaitingForQuorum);
    CHECK_THAT(d.message, Catch::EndsWith("waiting for the scheduler"));
  }
}

// A Volcano or KAI gang of `replicas` whose group object exists and whose
// members are bound (Scheduled once the capability check passes).
GangInput BackendGang(const std::string& backend, const json& config) {
  GangInput in;
  in.deployment = Deployment(2, config, backend);
  in.replicasets = {ReplicaSet()};
  in.group_objects = {
      {{"metadata",
        {{"name", kGroup},
         {"ownerReferences", json::array({{{"uid", kRsUid}, {"controller", true}}})}}},
       {"spec", {{"minMember", 2}}}}};
  in.pods = {Pod("p1", json::array(), "n1"), Pod("p2", json::array(), "n1")};
  return in;
}

TEST_CASE("UnsupportedProviderCapability is the admission check under the cluster facts",
          "[doctor]") {
  const std::string carrier = "metadata.annotations[wasd.io/scheduling]";
  SECTION("topology on Volcano: expressible only with a HyperNode tier for its key") {
    GangInput in = BackendGang("volcano", Config(2, kZone));
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kUnsupportedProviderCapability);
    CHECK(d.message == "backend volcano cannot express the scheduling configuration: " + carrier +
                           ".schedulingConstraints.topology: Forbidden: not supported by backend "
                           "\"volcano\": no HyperNode tier is configured for the node label "
                           "\"topology.kubernetes.io/zone\" (--volcano-topology-tiers); remove it "
                           "or use backend \"native\" or \"kai\"");
    CHECK(d.next_step ==
          "change the scheduling configuration as the error says, or configure the cluster facts "
          "it names (`wasd check --capabilities` shows what each backend expresses)");
    in.facts.volcano_tiers = {{kZone, workloadbuilder::VolcanoTier{1, ""}}};
    d = Diagnose(in);
    CHECK(d.reason == kScheduled);
    CHECK(d.message == "2/2 created, 0 gated by wasd, 2 bound, minCount 2");
  }
  SECTION("topology on KAI: expressible only when the KAI Topology lists the key") {
    GangInput in = BackendGang("kai", KaiConfig(kZone));
    Diagnosis d = Diagnose(in);
    CHECK(d.reason == kUnsupportedProviderCapability);
    CHECK_THAT(d.message, Catch::Contains("no KAI Topology is configured (--kai-topology)"));
    in.facts.kai_topology = "gpu-topo";
    in.facts.kai_topology_levels = {"kubernetes.io/hostname"};
    d = Diagnose(in);
    CHECK(d.reason == kUnsupportedProviderCapability);
    CHECK_THAT(d.message, Catch::Contains("the KAI Topology \"gpu-topo\" has no level "
                                          "\"topology.kubernetes.io/zone\""));
    in.facts.kai_topology_levels.push_back(kZone);
    CHECK(Diagnose(in).reason == kScheduled);
  }
  SECTION("rows the doctor's own copy of the table lacked") {
    json config = Config(2);
    config["disruptionMode"] = {{"all", json::object()}};
    Diagnosis d = Diagnose(BackendGang("volcano", config));
    CHECK(d.reason == kUnsupportedProviderCapability);
    CHECK_THAT(d.message, Catch::Contains(carrier + ".disruptionMode: Forbidden: not supported by "
                                                    "backend \"volcano\""));
    config = Config(2);
    config["backends"] = {{"kai", {{"queue", "team-a"}}}};
    d = Diagnose(BackendGang("volcano", config));
    CHECK(d.reason == kUnsupportedProviderCapability);
    CHECK_THAT(d.message,
               Catch::Contains(carrier + ".backends.kai: Forbidden: settings for backend "
                                         "\"kai\", but this Deployment uses backend "
                                         "\"volcano\""));
    // Native expresses every row: never this reason.
    config = Config(2, kZone);
    config["disruptionMode"] = {{"all", json::object()}};
    GangInput in = Native(2, 2);
    in.deployment = Deployment(2, config);
    CHECK(Diagnose(in).reason != kUnsupportedProviderCapability);
  }
}

TEST_CASE("the current ReplicaSet is the highest revision; old pods do not count", "[doctor]") {
  GangInput in = Native(2, 2);
  const std::string new_group = workloadbuilder::PodGroupName("web-bbbb", "rs-b");
  in.replicasets = {ReplicaSet(PodSpec(), "web-bbbb", "rs-b", 2), ReplicaSet()};
  in.pods = {Pod("p1", json::array(), "n1"), Pod("p2", json::array(), "n1")};
  const Diagnosis d = Diagnose(in);
  CHECK(d.replicaset == "web-bbbb");
  CHECK(d.group_name == new_group);
  CHECK(d.reason == kPodGroupMissing);
  CHECK(d.counts.created == 0);
}

TEST_CASE("bound_before_group: members bound while their group did not exist (Q23)", "[doctor]") {
  GangInput in = Native(3, 3);
  // p1 bound at 06:00:30 (PodScheduled True), p2 gated, p3 bound without a
  // PodScheduled condition (its creation, 06:00:03, stands for the bind).
  json p3 = Pod("p3", json::array(), "n1");
  p3["status"].erase("conditions");
  in.pods = {Pod("p1", json::array(), "n1"), Pod("p2", Gate("wasd.io/pod-group")), p3};
  SECTION("group created after both binds: both count, the message says so") {
    in.group_objects[0]["metadata"]["creationTimestamp"] = "2026-12-02T06:00:40Z";
    const Diagnosis d = Diagnose(in);
    CHECK(d.counts.bound_before_group == 2);
    CHECK(d.message.find("2 bound before their group existed") != std::string::npos);
    CHECK(ToJson(d)["counts"]["boundBeforeGroup"] == 2);
  }
  SECTION("group created between them: only the earlier bind counts") {
    in.group_objects[0]["metadata"]["creationTimestamp"] = "2026-12-02T06:00:10Z";
    CHECK(Diagnose(in).counts.bound_before_group == 1);
  }
  SECTION("a bind in the group's own second does not count (whole seconds)") {
    in.group_objects[0]["metadata"]["creationTimestamp"] = "2026-12-02T06:00:03Z";
    CHECK(Diagnose(in).counts.bound_before_group == 0);
  }
  SECTION("group created before: none") {
    in.group_objects[0]["metadata"]["creationTimestamp"] = "2026-12-02T05:00:00Z";
    const Diagnosis d = Diagnose(in);
    CHECK(d.counts.bound_before_group == 0);
    CHECK(d.message.find("before their group") == std::string::npos);
  }
  SECTION("group missing: every bound member counts") {
    in.group_objects.clear();
    const Diagnosis d = Diagnose(in);
    CHECK(d.reason == kPodGroupMissing);
    CHECK(d.counts.bound_before_group == 2);
  }
  SECTION("a group without a readable creation time says nothing") {
    CHECK(Diagnose(in).counts.bound_before_group == 0);
  }
}

TEST_CASE("the timeline lists created, gated, bound and running in time order", "[doctor]") {
  GangInput in = Native(2, 2);
  in.pods = {Pod("p2", json::array(), "n1"), Pod("p1", Gate("kueue.x-k8s.io/admission"))};
  const Diagnosis d = Diagnose(in);
  REQUIRE(d.timeline.size() == 5);
  CHECK(d.timeline[0].pod == "p1");
  CHECK(d.timeline[0].what == "created");
  CHECK(d.timeline[1].what == "gated (kueue.x-k8s.io/admission)");
  CHECK(d.timeline[2].pod == "p2");
  CHECK(d.timeline[3].what == "bound to n1");
  CHECK(d.timeline[3].time == "2026-12-02T06:00:30Z");
  CHECK(d.timeline[4].what == "running");
}

TEST_CASE("fit preview: per zone, requests × members against free capacity", "[doctor][fit]") {
  const json gpu2 = {{"cpu", "500m"}, {"nvidia.com/gpu", "2"}};
  const std::vector<json> nodes = {
      Node("a1", "zone-a", {{"cpu", "8"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}),
      Node("a2", "zone-a", {{"cpu", "8"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}),
      Node("b1", "zone-b", {{"cpu", "8"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}),
      Node("nozone", "", {{"cpu", "64"}, {"nvidia.com/gpu", "64"}, {"pods", "110"}}),
  };
  // a2 has 6 GPUs in use (and a finished pod that no longer counts): zone-a
  // holds 4 + 1 members of 2 GPUs; zone-b 4.
  const std::vector<json> bound = {BoundPod("a2", {{"nvidia.com/gpu", "6"}}),
                                   BoundPod("a1", {{"nvidia.com/gpu", "8"}}, "Succeeded")};
  const FitPreview fit = PreviewFit(PodSpec(gpu2), 8, kZone, nodes, bound);
  REQUIRE(fit.computed);
  REQUIRE(fit.domains.size() == 2);
  CHECK(fit.domains[0].domain == "zone-a");
  CHECK(fit.domains[0].room == 5);
  CHECK(fit.domains[0].nodes == 2);
  CHECK(fit.domains[1].room == 4);
  CHECK_FALSE(fit.fits);
  CHECK(fit.text ==
        "largest topology.kubernetes.io/zone (zone-a) has room for 5 of 8 members; short 6 "
        "nvidia.com/gpu");

  // Without a topology key the whole cluster counts, the unlabelled node too.
  const FitPreview all = PreviewFit(PodSpec(gpu2), 8, "", nodes, bound);
  CHECK(all.fits);
  CHECK(all.text == "the cluster has room for 8 of 8 members");
}

TEST_CASE("fit preview: nodeSelector, taints, tolerations, unschedulable", "[doctor][fit]") {
  const json alloc = {{"cpu", "4"}, {"memory", "8Gi"}};
  const std::vector<json> nodes = {
      Node("tainted", "z", alloc,
           {{"taints",
             json::array({{{"key", "gpu"}, {"value", "yes"}, {"effect", "NoSchedule"}}})}}),
      Node("soft", "z", alloc,
           {{"taints", json::array({{{"key", "x"}, {"effect", "PreferNoSchedule"}}})}}),
      Node("cordoned", "z", alloc, {{"unschedulable", true}}),
      Node("plain", "z", alloc),
  };
  const json req = {{"cpu", "1"}, {"memory", "3Gi"}};
  // Untolerated NoSchedule and cordoned nodes are out: soft + plain, 2 each (memory).
  FitPreview fit = PreviewFit(PodSpec(req), 6, "", nodes, {});
  CHECK(fit.domains[0].room == 4);
  CHECK(fit.domains[0].nodes == 2);
  CHECK(fit.text == "the cluster has room for 4 of 6 members; short 2Gi memory");
  // Tolerating the taint adds the tainted node.
  const json tol = {
      {"tolerations",
       json::array(
           {{{"key", "gpu"}, {"operator", "Equal"}, {"value", "yes"}, {"effect", "NoSchedule"}}})}};
  fit = PreviewFit(PodSpec(req, tol), 6, "", nodes, {});
  CHECK(fit.domains[0].room == 6);
  CHECK(fit.fits);
  // A nodeSelector no node matches leaves nothing.
  fit = PreviewFit(PodSpec(req, {{"nodeSelector", {{"pool", "big"}}}}), 2, "", nodes, {});
  CHECK(fit.domains.empty());
  CHECK_FALSE(fit.fits);
  CHECK(fit.text == "no node the members may use (nodeSelector, taints, unschedulable)");
}

TEST_CASE("fit preview: fragmented capacity and the pods resource", "[doctor][fit]") {
  // Two nodes with 1.5 CPU free each: 3 CPU in total, but a 2-CPU member fits nowhere.
  const std::vector<json> nodes = {Node("n1", "", {{"cpu", "1500m"}}),
                                   Node("n2", "", {{"cpu", "1500m"}})};
  FitPreview fit = PreviewFit(PodSpec({{"cpu", "2"}}), 1, "", nodes, {});
  CHECK(fit.text ==
        "the cluster has room for 0 of 1 members; the free capacity is split across nodes");
  // With pods allocatable, the count is the only limit left.
  const std::vector<json> pods_nodes = {Node("n1", "", {{"cpu", "100"}, {"pods", "3"}})};
  fit = PreviewFit(PodSpec({{"cpu", "100m"}}), 5, "", pods_nodes, {});
  CHECK(fit.domains[0].room == 3);
}

TEST_CASE("PodRequests: containers summed, init containers at least, overhead added",
          "[doctor][fit]") {
  const json spec = {
      {"containers",
       json::array({{{"resources", {{"requests", {{"cpu", "250m"}, {"memory", "1Gi"}}}}}},
                    {{"resources", {{"requests", {{"cpu", "250m"}}}}}}})},
      {"initContainers", json::array({{{"resources", {{"requests", {{"cpu", "2"}}}}}}})},
      {"overhead", {{"memory", "512Mi"}}}};
  const auto r = PodRequests(spec);
  const std::vector<std::pair<std::string, std::int64_t>> want = {
      {"cpu", 2000}, {"memory", 1610612736000}, {"pods", 1000}};
  CHECK(r == want);
}

TEST_CASE("ScaleUpPending previews only the domain where the gang runs", "[doctor][fit]") {
  GangInput in = Native(4, 2);
  in.deployment = Deployment(4, Config(2, kZone));
  in.replicasets = {ReplicaSet(PodSpec({{"nvidia.com/gpu", "1"}}))};
  in.group_objects = {NativeGroup(2, Cond("True", "Scheduled", ""))};
  in.pods = {Pod("p1", json::array(), "a1"), Pod("p2", json::array(), "a1"), Pod("p3"), Pod("p4")};
  in.nodes = {Node("a1", "zone-a", {{"nvidia.com/gpu", "2"}}),
              Node("b1", "zone-b", {{"nvidia.com/gpu", "8"}})};
  in.bound_pods = {BoundPod("a1", {{"nvidia.com/gpu", "1"}}),
                   BoundPod("a1", {{"nvidia.com/gpu", "1"}})};
  const Diagnosis d = Diagnose(in);
  CHECK(d.reason == kScaleUpPending);
  CHECK(d.fit.text ==
        "topology.kubernetes.io/zone zone-a (where the gang runs) has room for 0 of 2 members; "
        "short 2 nvidia.com/gpu");
}

TEST_CASE("Unschedulable from the fit preview alone, with it in the message", "[doctor][fit]") {
  GangInput in = Native(8, 8);
  const json gpu = {{"nvidia.com/gpu", "1"}};
  in.replicasets = {ReplicaSet(PodSpec(gpu))};
  for (int i = 1; i <= 8; ++i) in.pods.push_back(Pod("p" + std::to_string(i)));
  in.deployment = Deployment(8, Config(8, kZone));
  in.nodes = {Node("a1", "zone-a", {{"nvidia.com/gpu", "4"}}),
              Node("a2", "zone-a", {{"nvidia.com/gpu", "2"}}),
              Node("b1", "zone-b", {{"nvidia.com/gpu", "4"}})};
  const Diagnosis d = Diagnose(in);
  CHECK(d.reason == kUnschedulable);
  CHECK(d.message ==
        "8/8 created, 0 gated by wasd, 0 bound, minCount 8; largest topology.kubernetes.io/zone "
        "(zone-a) has room for 6 of 8 members; short 2 nvidia.com/gpu");
  const json j = ToJson(d);
  CHECK(j["fit"]["short"] == json({{"nvidia.com/gpu", "2"}}));
  CHECK(j["fit"]["domains"][0] == json({{"domain", "zone-a"}, {"nodes", 2}, {"room", 6}}));
}

}  // namespace
}  // namespace wasd::doctor
