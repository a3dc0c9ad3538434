// The offline check behind `wasd check`: reads manifests, runs the webhook's
// CREATE rules on each Deployment after the API server's defaults, prints
// verdicts (text, yaml, json, junit) and the objects wasd would create.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/check.h"
#include "check/defaults.h"
#include "check/manifest_reader.h"
#include "check/verdict.h"
#include "check/yaml_output.h"
#include "rules/deployment_rules.h"
#include "workloadbuilder/backend_capabilities.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::check {

namespace {

using nlohmann::json;

// Offline there is no API server: these stand in for values only it knows.
constexpr const char* kPlaceholderUid = "00000000-0000-0000-0000-000000000000";
constexpr const char* kPlaceholderHash = "<pod-template-hash>";

std::string StringAt(const json& obj, std::initializer_list<const char*> keys) {
  const json* v = &obj;
  for (const char* k : keys) {
    if (!v->is_object()) return {};
    auto it = v->find(k);
    if (it == v->end()) return {};
    v = &*it;
  }
  return v->is_string() ? v->get<std::string>() : std::string();
}

// The would-be ReplicaSet of `deployment` (placeholder hash and UID).
json PlaceholderReplicaSet(const json& deployment) {
  const std::string name = StringAt(deployment, {"metadata", "name"});
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata",
           {{"name", name + "-" + kPlaceholderHash},
            {"namespace", StringAt(deployment, {"metadata", "namespace"})},
            {"uid", kPlaceholderUid}}},
          {"spec", {{"replicas", deployment["spec"]["replicas"]}}}};
}

// The pod link a pod of the would-be ReplicaSet gets from the pod webhook,
// as a note (pods are not objects wasd creates).
std::string PodLinkNote(workloadbuilder::Backend backend, const std::string& group,
                        const workloadbuilder::ClusterFacts& facts) {
  namespace wb = workloadbuilder;
  std::string link;
  switch (backend) {
    case wb::Backend::kNative: link = "spec.schedulingGroup.podGroupName: " + group; break;
    case wb::Backend::kVolcano:
      link = "annotation " + std::string(wb::kVolcanoGroupAnnotation) + ": " + group;
      break;
    case wb::Backend::kKai:
      link = "annotations " + std::string(wb::kKaiGroupAnnotation) + ": " + group + ", " +
             std::string(wb::kKaiSkipPodgrouperAnnotation) + ": \"true\"";
      break;
    case wb::Backend::kCoscheduling:
      link = "label " + std::string(wb::kCoschedulingGroupLabel) + ": " + group;
      break;
  }
  std::string note = "backend " + std::string(wb::BackendName(backend)) + ": each pod gets " + link;
  const std::string_view scheduler = wb::SchedulerNameFor(backend, facts);
  if (!scheduler.empty()) {
    note += " and schedulerName " + std::string(scheduler) + " (in place of default-scheduler)";
  }
  // How it waits for its group under the webhook's default --pod-hold
  // (docs/design.md Q23); `wasd check` does not know the installed flags.
  const std::string gate = "wasd's scheduling gate " + std::string(wb::kPodGroupGate);
  switch (backend) {
    case wb::Backend::kNative:
      note +=
          "; its scheduler holds it until the PodGroup exists while the cluster serves "
          "Workloads and PodGroups, and " +
          gate + " holds it while it does not (or with --pod-hold native=gate)";
      break;
    case wb::Backend::kCoscheduling:
      note += "; " + gate + " holds it until the PodGroup exists";
      break;
    default:
      note += "; its scheduler holds it until the PodGroup exists (" + gate +
              " only with --pod-hold " + std::string(wb::BackendName(backend)) + "=gate)";
  }
  return note;
}

// The group object a non-native backend gets for an allowed Deployment.
bool PreviewBackend(workloadbuilder::Backend backend, const json& deployment,
                    const workloadbuilder::SchedulingConfig& cfg,
                    const workloadbuilder::ClusterFacts& facts, json& objects,
                    std::vector<std::string>& notes, std::string& error) {
  const json rs = PlaceholderReplicaSet(deployment);
  const std::string name = StringAt(deployment, {"metadata", "name"});
  notes.push_back(std::string("the PodGroup is named after the ReplicaSet ") + name + "-" +
                  kPlaceholderHash +
                  " and its UID: the pod-template-hash and the UID are only known in a cluster");
  workloadbuilder::BuildResult pg =
      workloadbuilder::BuildBackendPodGroup(backend, deployment, cfg.config, rs, facts);
  if (!pg.ok()) {
    error = pg.error;
    return false;
  }
  notes.push_back(PodLinkNote(backend, pg.object["metadata"]["name"].get<std::string>(), facts));
  objects.push_back(std::move(pg.object));
  return true;
}

// The Workload and PodGroup wasd would create for an allowed Deployment.
// `notes` collects what was made up for lack of an API server.
bool Preview(json deployment, const workloadbuilder::SchedulingConfig& cfg, json& objects,
             std::vector<std::string>& notes, std::string& error) {
  json& meta = deployment["metadata"];
  if (StringAt(deployment, {"metadata", "uid"}).empty()) {
    meta["uid"] = kPlaceholderUid;
    notes.push_back(std::string("no metadata.uid: the Workload name is computed from the "
                                "placeholder UID ") +
                    kPlaceholderUid);
  }
  workloadbuilder::BuildResult wl = workloadbuilder::BuildWorkload(deployment, cfg.config, {});
  if (!wl.ok()) {
    error = wl.error;
    return false;
  }
  const std::string name = StringAt(deployment, {"metadata", "name"});
  const json rs = PlaceholderReplicaSet(deployment);
  notes.push_back(std::string("the PodGroup is named after the ReplicaSet ") + name + "-" +
                  kPlaceholderHash +
                  " and its UID: the pod-template-hash and the UID are only known in a cluster");
  json wl_obj = std::move(wl.object);
  // The PodGroup's owner reference needs the Workload's UID, which only the
  // API server assigns.
  wl_obj["metadata"]["uid"] = kPlaceholderUid;
  workloadbuilder::BuildResult pg = workloadbuilder::BuildPodGroup(wl_obj, rs);
  wl_obj["metadata"].erase("uid");
  if (!pg.ok()) {
    error = pg.error;
    return false;
  }
  objects.push_back(std::move(wl_obj));
  objects.push_back(std::move(pg.object));
  return true;
}

// Rewrites every `scheduling.k8s.io/...` apiVersion in `objects` (the
// objects' own and their ownerReferences') to `scheduling.k8s.io/<version>`.
// The builder writes one version; which one a cluster serves is discovered
// there, and chosen here by --scheduling-api-version.
void SetSchedulingApiVersion(json& objects, const std::string& version) {
  constexpr std::string_view kGroup = "scheduling.k8s.io/";
  const auto rewrite = [&](json& holder) {
    auto it = holder.find("apiVersion");
    if (it == holder.end() || !it->is_string()) return;
    const std::string& now = it->get_ref<const std::string&>();
    if (now.rfind(kGroup, 0) == 0) *it = std::string(kGroup) + version;
  };
  for (json& o : objects) {
    if (!o.is_object()) continue;
    rewrite(o);
    auto meta = o.find("metadata");
    if (meta == o.end() || !meta->is_object()) continue;
    auto owners = meta->find("ownerReferences");
    if (owners == meta->end() || !owners->is_array()) continue;
    for (json& ref : *owners) {
      if (ref.is_object()) rewrite(ref);
    }
  }
}

// How a spec.scheduling verdict is labelled, everywhere it is printed.
constexpr const char* kInTreeLabel =
    "spec.scheduling: judged as kube-controller-manager's WorkloadWithDeployment integration "
    "would (KEP-6276 rules); that controller, not wasd, manages this Deployment and wasd "
    "creates nothing for it";

// The webhook's verdict on manifest `m` (CREATE, after the API server's
// defaults). `error` is set only when the Workload cannot be built at all.
Verdict Judge(const Manifest& m, const workloadbuilder::BackendSettings& backends,
              std::string& error) {
  Verdict v;
  v.manifest = &m;
  v.kind = StringAt(m.object, {"kind"});
  v.api_version = StringAt(m.object, {"apiVersion"});
  v.name = StringAt(m.object, {"metadata", "name"});
  // kubectl refuses such an object ("apiVersion not set, kind not set"): a
  // manifest that is not a Kubernetes object is a mistake, not a skip.
  if (v.kind.empty() || v.api_version.empty()) {
    std::string missing = v.api_version.empty() ? "apiVersion" : "";
    if (v.kind.empty()) missing += std::string(missing.empty() ? "" : " and ") + "kind";
    error = m.source + ": document " + std::to_string(m.index) +
            " is not a Kubernetes object: " + missing + " not set";
    return v;
  }
  if (v.kind != "Deployment" || v.api_version != "apps/v1") {
    v.result = Result::kSkipped;
    return v;
  }
  json d = m.object;
  ApplyDeploymentDefaults(d);
  v.ns = StringAt(d, {"metadata", "namespace"});
  v.warnings = rules::AnnotationWarnings(d);
  // The webhook's own verdict: errors, or the warnings of an allowed object.
  rules::DeploymentReview review = rules::ReviewDeploymentCreate(d, backends);
  const auto cfg = workloadbuilder::ReadSchedulingConfig(d);  // wasd's carrier alone
  if (cfg.present()) {
    v.manager = Manager::kWasd;
  } else if (workloadbuilder::HasInTreeScheduling(d)) {
    v.manager = Manager::kInTree;
    v.notes.emplace_back(kInTreeLabel);
  }
  v.errors = std::move(review.errors);
  if (!v.errors.empty()) {
    v.result = Result::kDenied;
    return v;
  }
  if (v.manager != Manager::kWasd) {
    v.result = v.manager == Manager::kNone ? Result::kIgnored : Result::kAllowed;
    for (std::string& w : review.warnings) v.warnings.push_back(std::move(w));
    return v;
  }
  for (std::string& w : review.warnings) v.warnings.push_back(std::move(w));
  const workloadbuilder::Backend backend = workloadbuilder::DeploymentBackend(d, backends.backend);
  if (backend == workloadbuilder::Backend::kNative) {
    if (!Preview(d, cfg, v.objects, v.notes, error)) {
      error = "deployment.apps/" + v.name + ": cannot build the Workload: " + error;
    }
  } else if (!PreviewBackend(backend, d, cfg, backends.facts, v.objects, v.notes, error)) {
    error = "deployment.apps/" + v.name + ": cannot build the " +
            std::string(workloadbuilder::BackendName(backend)) + " PodGroup: " + error;
  }
  return v;
}

}  // namespace

// A CheckResult (-o json) streamed: the same text as VerdictsJson(...).dump(2),
// one item at a time (each item's lines indented to its place).
void PrintJsonItem(const Verdict& v, bool first) {
  const std::string item = VerdictItemJson(v).dump(2);
  std::string out = first ? "    " : ",\n    ";
  for (const char c : item) {
    out += c;
    if (c == '\n') out += "    ";
  }
  std::fputs(out.c_str(), stdout);
}

int Run(const Options& options) {
  // Standard input can be read once; both passes read this copy.
  std::string stdin_text;
  bool has_stdin = false;
  for (const std::string& file : options.files) {
    if (file != "-" || has_stdin) continue;
    std::string error;
    if (!ReadStdin(stdin_text, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 2;
    }
    has_stdin = true;
  }
  // Every manifest through `fn`, one at a time (check/manifest_reader.h):
  // memory holds one file's text and one document, however long the
  // stream. False after an unusable input, with the error printed.
  std::string judge_error;
  const auto each = [&](const std::function<void(Verdict&)>& fn, bool first_pass) {
    for (const std::string& file : options.files) {
      ManifestReadResult r = ReadManifests(
          file, options.recursive,
          [&](Manifest& m) {
            Verdict v = Judge(m, options.backends, judge_error);
            if (!judge_error.empty()) return false;
            SetSchedulingApiVersion(v.objects, options.scheduling_api_version);
            fn(v);
            return true;
          },
          has_stdin ? &stdin_text : nullptr);
      if (!r.error.empty() || !judge_error.empty()) {
        std::fprintf(stderr, "error: %s\n",
                     r.error.empty() ? judge_error.c_str() : r.error.c_str());
        return false;
      }
      if (first_pass) {
        for (const std::string& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
      }
    }
    return true;
  };

  // Pass 1: every input read and judged, nothing printed: an unusable
  // document anywhere is an error before any verdict (no partial report),
  // and the counts are known for the report's header.
  std::size_t total = 0;
  int denied = 0;
  int checked = 0;
  if (!each(
          [&](Verdict& v) {
            ++total;
            if (v.result != Result::kSkipped) ++checked;
            if (v.result == Result::kDenied) ++denied;
          },
          true)) {
    return 2;
  }
  // Nothing to judge is a mistake (an empty file, a glob that matched
  // nothing), not a pass: as kubectl apply says.
  if (total == 0) {
    std::fprintf(stderr, "error: no objects passed to check\n");
    return 2;
  }

  // Pass 2: the report, one verdict at a time. Progress on a terminal's
  // stderr while the report goes elsewhere.
  const bool progress = isatty(STDERR_FILENO) == 1 && isatty(STDOUT_FILENO) != 1 && total >= 1000;
  std::size_t done = 0;
  const auto tick = [&] {
    if (progress && ++done % 500 == 0) {
      std::fprintf(stderr, "\rchecked %zu/%zu object(s)", done, total);
    }
  };
  bool ok = true;
  if (options.output == "json") {
    std::printf(
        "{\n  \"apiVersion\": \"wasd.io/v1alpha1\",\n  \"checked\": %d,\n  \"denied\": %d,\n"
        "  \"items\": [\n",
        checked, denied);
    bool first = true;
    ok = each(
        [&](Verdict& v) {
          PrintJsonItem(v, first);
          first = false;
          tick();
        },
        false);
    std::printf("\n  ],\n  \"kind\": \"CheckResult\"\n}\n");
  } else if (options.output == "junit") {
    std::fputs(JunitHeader(total, checked, denied).c_str(), stdout);
    ok = each(
        [&](Verdict& v) {
          std::fputs(VerdictJunitCase(v).c_str(), stdout);
          tick();
        },
        false);
    std::fputs(JunitFooter().c_str(), stdout);
  } else {
    const bool text = options.output == "text";
    std::FILE* report = text ? stdout : stderr;
    ok = each(
        [&](Verdict& v) {
          PrintVerdict(v, report, text);
          if (!text) {
            for (const json& o : v.objects) std::printf("---\n%s", ToYaml(o).c_str());
          }
          tick();
        },
        false);
    std::fprintf(report, "%d Deployment(s) checked, %d denied\n", checked, denied);
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  // The inputs changed between the passes (a file rewritten meanwhile).
  if (!ok) return 2;
  return denied > 0 ? 1 : 0;
}

int PrintCapabilities(const workloadbuilder::BackendSettings& settings, bool only_chosen) {
  const std::string text =
      workloadbuilder::CapabilityTableText(only_chosen ? &settings.backend : nullptr);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace wasd::check
