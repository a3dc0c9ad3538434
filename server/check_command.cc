// `wasd check -f FILE... [-o text|yaml|json]`: runs the webhook's CREATE rules
// on manifests offline, after the defaults kube-apiserver applies before
// admission, prints denials the way kubectl shows them, and shows the
// Workload and PodGroup wasd would create.
//
// Exit codes: 0 every Deployment allowed; 1 at least one denied; 2 unusable
// input (missing file, not YAML/JSON, bad flags).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admission/defaults.h"
#include "rules/deployment_rules.h"
#include "server/commands.h"
#include "server/manifest_reader.h"
#include "server/yaml_output.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::server {

namespace {

using nlohmann::json;

// Offline there is no API server: these stand in for values only it knows.
constexpr const char* kPlaceholderUid = "00000000-0000-0000-0000-000000000000";
constexpr const char* kPlaceholderHash = "<pod-template-hash>";

constexpr const char* kUsage =
    "Usage: wasd check -f FILE|DIR|- [-f ...] [-R] [-o text|yaml|json]\n"
    "\n"
    "Runs wasd's admission rules on Deployment manifests without a cluster, after\n"
    "applying the defaults the API server applies (replicas 1, strategy\n"
    "RollingUpdate, ...), and shows the Workload and PodGroup wasd would create.\n"
    "\n"
    "Flags:\n"
    "  -f, --filename FILE   manifest file (YAML stream or JSON; '-' for stdin), or\n"
    "                        a directory (its *.yaml, *.yml and *.json files);\n"
    "                        may repeat, and may be followed by more files\n"
    "  -R, --recursive       also read the subdirectories of a directory given to -f\n"
    "  -o, --output FORMAT   text (default): verdicts, denials as kubectl prints them,\n"
    "                          and the objects as YAML;\n"
    "                        yaml|json: the objects that would be created, on stdout;\n"
    "                          verdicts and denials on stderr\n"
    "  -h, --help            this help\n"
    "\n"
    "Other kinds are skipped; kind: List is expanded. Without metadata.uid the\n"
    "Workload name is computed from the placeholder UID "
    "00000000-0000-0000-0000-000000000000;\n"
    "the PodGroup is named after a placeholder pod-template-hash (only the\n"
    "Deployment controller knows the real one).\n"
    "\n"
    "Exit status: 0 all allowed, 1 some denied, 2 unusable input.\n";

struct Flags {
  bool recursive = false;
  std::vector<std::string> files;
  std::string output = "text";
};

// Returns -1 when parsing succeeded, else the exit code to return.
int ParseFlags(int argc, char** argv, Flags& f) {
  bool files_follow = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      const std::string eq = std::string(name) + "=";
      if (a.rfind(eq, 0) == 0) return argv[i] + eq.size();
      if (i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-f" || a == "--filename" || a.rfind("--filename=", 0) == 0) {
      const char* v = value("--filename");
      if (v == nullptr) {
        std::fprintf(stderr, "wasd check: %s needs a file name\n", a.c_str());
        return 2;
      }
      f.files.emplace_back(v);
      files_follow = true;
    } else if (a == "-R" || a == "--recursive" || a == "--recursive=true") {
      f.recursive = true;
    } else if (a == "--recursive=false") {
      f.recursive = false;
    } else if (a == "-o" || a == "--output" || a.rfind("--output=", 0) == 0) {
      const char* v = value("--output");
      if (v == nullptr) {
        std::fprintf(stderr, "wasd check: %s needs text, yaml or json\n", a.c_str());
        return 2;
      }
      f.output = v;
      files_follow = false;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "wasd check: unknown flag %s\n%s", a.c_str(), kUsage);
      return 2;
    } else if (files_follow) {
      f.files.push_back(a);
    } else {
      std::fprintf(stderr, "wasd check: unexpected argument %s (use -f FILE)\n", a.c_str());
      return 2;
    }
  }
  if (f.output != "text" && f.output != "yaml" && f.output != "json") {
    std::fprintf(stderr, "wasd check: --output must be text, yaml or json, not %s\n",
                 f.output.c_str());
    return 2;
  }
  if (f.files.empty()) {
    std::fprintf(stderr, "wasd check: no manifests given (use -f FILE)\n%s", kUsage);
    return 2;
  }
  return -1;
}

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

// What kubectl prints when the webhook denies the Deployment: the API server
// passes wasd's status (reason Invalid, details with kind, name and one cause
// per field error) through, and kubectl renders the causes, one line for one
// error and a "* " list for several, as it does for the API server's own
// validation errors.
std::string KubectlDenial(const std::string& name, const workloadbuilder::FieldErrorList& errors) {
  std::vector<std::string> lines;
  for (const auto& e : errors) {
    std::string line = e.ToString();
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
  }
  std::string out = "The Deployment \"" + name + "\" is invalid: ";
  if (lines.size() == 1) return out + lines.front();
  for (const std::string& l : lines) out += "\n* " + l;
  return out;
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
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata",
              {{"name", name + "-" + kPlaceholderHash},
               {"namespace", StringAt(deployment, {"metadata", "namespace"})},
               {"uid", kPlaceholderUid}}},
             {"spec", {{"replicas", deployment["spec"]["replicas"]}}}};
  notes.push_back(std::string("the PodGroup is named after the ReplicaSet, ") + name + "-" +
                  kPlaceholderHash + ": the pod-template-hash is only known in a cluster");
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

}  // namespace

int RunCheck(int argc, char** argv) {
  Flags flags;
  if (int rc = ParseFlags(argc, argv, flags); rc >= 0) return rc;

  std::vector<Manifest> manifests;
  for (const std::string& file : flags.files) {
    ManifestReadResult r = ReadManifests(file, flags.recursive);
    if (!r.error.empty()) {
      std::fprintf(stderr, "error: %s\n", r.error.c_str());
      return 2;
    }
    for (auto& m : r.manifests) manifests.push_back(std::move(m));
  }

  const bool text = flags.output == "text";
  std::FILE* report = text ? stdout : stderr;
  json created = json::array();
  int denied = 0;
  int checked = 0;
  for (Manifest& m : manifests) {
    const std::string kind = StringAt(m.object, {"kind"});
    const std::string api_version = StringAt(m.object, {"apiVersion"});
    const std::string name = StringAt(m.object, {"metadata", "name"});
    if (kind != "Deployment" || api_version != "apps/v1") {
      std::fprintf(report, "skipped: %s %s (%s): wasd checks only apps/v1 Deployments\n",
                   kind.empty() ? "<no kind>" : kind.c_str(), name.c_str(), m.source.c_str());
      continue;
    }
    ++checked;
    json d = m.object;
    admission::ApplyDeploymentDefaults(d);
    const std::string ns = StringAt(d, {"metadata", "namespace"});
    const auto cfg = workloadbuilder::ReadSchedulingConfig(d);
    const auto errors = rules::ValidateDeploymentCreate(d);
    const std::string ref = "deployment.apps/" + name;
    if (!errors.empty()) {
      ++denied;
      std::fprintf(report, "%s (%s): denied\n%s\n", ref.c_str(), m.source.c_str(),
                   KubectlDenial(name, errors).c_str());
      continue;
    }
    if (!cfg.present()) {
      std::fprintf(report,
                   "%s (%s): allowed; no wasd.io/scheduling annotation or spec.scheduling, so "
                   "wasd leaves it alone\n",
                   ref.c_str(), m.source.c_str());
      continue;
    }
    std::fprintf(report, "%s (%s): allowed\n", ref.c_str(), m.source.c_str());
    for (const std::string& w : rules::DeploymentWarnings(d)) {
      std::fprintf(report, "Warning: %s\n", w.c_str());
    }
    json objects = json::array();
    std::vector<std::string> notes;
    std::string error;
    if (!Preview(d, cfg, objects, notes, error)) {
      std::fprintf(stderr, "error: %s: cannot build the Workload: %s\n", ref.c_str(),
                   error.c_str());
      return 2;
    }
    for (const std::string& n : notes) std::fprintf(report, "note: %s\n", n.c_str());
    if (text) {
      std::printf("objects wasd would create for %s in namespace %s:\n", ref.c_str(), ns.c_str());
      for (const json& o : objects) std::printf("---\n%s", ToYaml(o).c_str());
    }
    for (json& o : objects) created.push_back(std::move(o));
  }

  if (flags.output == "json") {
    std::printf("%s\n",
                json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", created}}.dump(2).c_str());
  } else if (flags.output == "yaml") {
    for (const json& o : created) std::printf("---\n%s", ToYaml(o).c_str());
  }
  std::fprintf(report, "%d Deployment(s) checked, %d denied\n", checked, denied);
  return denied > 0 ? 1 : 0;
}

}  // namespace wasd::server
