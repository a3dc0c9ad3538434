// `wasd migrate deployment/NAME | --all [-n NS] | -A` (also `kubectl wasd
// migrate`, main.cc): hands Deployments that wasd runs over to the in-tree
// Deployment controller. The plan and manifest are migrate/plan.h's (pure);
// this file reads the Deployments, asks the cluster (migrate_apply.h), prints
// and, with --apply, runs the plans.
//
// Output: -o yaml (default) one YAML document per Deployment, the plan as #
// comments over the new manifest; -o json {"items": [plan objects]}. Refusals
// and progress go to stderr.
//
// Exit codes: 0 every plan printed (or carried out), 1 a refusal, a failed
// step or a declined confirmation, 2 bad flags or no client configuration
// (docs/reference/cli.md).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/yaml_output.h"
#include "cmd/commands.h"
#include "cmd/deployment_target.h"
#include "cmd/migrate_apply.h"
#include "cmd/migrate_flags.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "migrate/plan.h"
#include "migrate/saved.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "runtime/flags.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::cmd {
namespace {

using nlohmann::json;

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return runtime::kExitFailed;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool HasAnnotation(const json& d) {
  return objects::AsString(objects::MemberPath(
             d, {"metadata", "annotations", workloadbuilder::kSchedulingAnnotation})) != nullptr;
}

// The flags' consistency; a usage error (exit 2) or nothing.
std::optional<int> CheckArgs(const runtime::FlagSet& flags, const MigrateSettings& s,
                             const DeploymentTarget& target) {
  const bool many = s.all || s.all_namespaces;
  if (!s.resume.empty()) {
    if (target.given || many || s.apply || !s.plan.empty() || !s.new_name.empty()) {
      return flags.UsageError(
          "--resume FILE takes no Deployment, --all, --apply, --plan or --new-name: the file "
          "says what to finish");
    }
    return std::nullopt;
  }
  if (s.apply && s.plan.empty()) {
    return flags.UsageError(
        "--apply needs --plan in-place (delete, then re-create: downtime) or --plan "
        "side-by-side (a second Deployment first); no plan that deletes is a default");
  }
  if (target.given && many) {
    return flags.UsageError("give either deployment/NAME or --all/-A, not both");
  }
  if (!target.given && !many) {
    return flags.UsageError(
        "no Deployment given (wasd migrate deployment/NAME, deployment NAME, --all or -A)");
  }
  if (target.given && (target.name.empty() || target.name.find('/') != std::string::npos)) {
    return flags.UsageError("want deployment/NAME, got deployment/" + target.name);
  }
  const std::optional<migrate::PlanKind> kind = migrate::ParsePlanKind(s.plan);
  if (!s.new_name.empty() && (kind != migrate::PlanKind::kSideBySide || many)) {
    return flags.UsageError("--new-name needs --plan side-by-side and one Deployment");
  }
  if (s.all_namespaces && flags.Given("namespace")) {
    return flags.UsageError("-A (all namespaces) and -n NS do not go together");
  }
  return std::nullopt;
}

// The Deployments: the one named (refused later if wasd does not run it), or
// every one with the annotation. An exit code when there is nothing to do or
// the read failed.
std::optional<int> ReadDeployments(kube::Client& client, const kube::RequestOptions& ro,
                                   const std::string& ns, const DeploymentTarget& target,
                                   std::vector<json>& deployments) {
  if (target.given) {
    auto d = client.Get(kube::Deployments(), ns, target.name, ro);
    if (!d.ok()) {
      if (d.status().not_found()) {
        return Fail("deployment \"" + target.name + "\" not found in namespace \"" + ns + "\"");
      }
      return Fail("reading deployment " + ns + "/" + target.name + ": " + Why(d.status()));
    }
    deployments.push_back(std::move(d.value()));
    return std::nullopt;
  }
  kube::ListOptions lo;
  lo.request = ro;
  auto list = client.List(kube::Deployments(), ns, lo);
  if (!list.ok()) {
    return Fail("listing deployments" + (ns.empty() ? std::string() : " in " + ns) + ": " +
                Why(list.status()));
  }
  for (json& d : list.value().items) {
    if (HasAnnotation(d)) deployments.push_back(std::move(d));
  }
  if (deployments.empty()) {
    std::fprintf(stderr, "No Deployments with the annotation wasd.io/scheduling%s.\n",
                 ns.empty() ? "" : (" in namespace " + ns).c_str());
    return runtime::kExitOk;
  }
  return std::nullopt;
}

// Every plan is made and checked before anything is written: one refusal
// stops --apply before it starts. Refusals are printed; their count is
// returned beside the plans that may run.
int MakePlans(Migrator& migrator, const MigrateSettings& s, const std::string& ns,
              const std::vector<json>& deployments, std::vector<migrate::Plan>& plans) {
  int refused = 0;
  const base::Status served = migrator.DiscoverSchedulingVersion(ns);
  for (const json& d : deployments) {
    migrate::PlanOptions po;
    po.kind = *migrate::ParsePlanKind(s.plan.empty() ? "in-place" : s.plan);
    po.new_name = s.new_name;
    migrate::Plan p = migrate::MakePlan(d, po);
    if (p.ok() && !served.ok()) {
      p.refusal = "deployment " + p.ns + "/" + p.name + ": " + served.message();
    }
    if (p.ok()) {
      if (std::string why = migrator.Check(p); !why.empty()) {
        p.refusal = "deployment " + p.ns + "/" + p.name + ": " + why;
      }
    }
    if (!p.ok()) {
      std::fprintf(stderr, "error: cannot migrate %s\n", p.refusal.c_str());
      ++refused;
      continue;
    }
    plans.push_back(std::move(p));
  }
  return refused;
}

void PrintPlans(const std::vector<migrate::Plan>& plans, const std::string& output) {
  if (output == "json") {
    json items = json::array();
    for (const migrate::Plan& p : plans) items.push_back(migrate::PlanJson(p));
    std::fputs((json{{"items", items}}.dump(2) + "\n").c_str(), stdout);
  } else {
    bool first = true;
    for (const migrate::Plan& p : plans) {
      const std::string doc =
          (first ? "" : "---\n") + migrate::PlanComment(p) + check::ToYaml(p.manifest);
      std::fputs(doc.c_str(), stdout);
      first = false;
    }
  }
  std::fflush(stdout);
}

// Where plan `p`'s manifest is saved: --save-manifest as a file (one
// Deployment) or a directory (several, or an existing directory), else the
// default name in the current directory.
std::string SavePath(const MigrateSettings& s, const migrate::Plan& p, bool many) {
  const std::string name = migrate::DefaultSavedName(p.ns, p.name);
  if (s.save_manifest.empty()) return name;
  if (many || IsDirectory(s.save_manifest)) return s.save_manifest + "/" + name;
  return s.save_manifest;
}

// In place deletes before it creates: asks on a terminal, refuses a script
// that did not say --yes. The exit code when it must not go on.
std::optional<int> Confirm(const runtime::FlagSet& flags, const MigrateSettings& s,
                           const std::vector<migrate::Plan>& plans) {
  if (!s.apply || s.yes || plans.empty() || plans[0].kind != migrate::PlanKind::kInPlace) {
    return std::nullopt;
  }
  if (::isatty(STDIN_FILENO) == 0) {
    return flags.UsageError(
        "--plan in-place deletes each Deployment before it re-creates it (downtime), and "
        "standard input is not a terminal to ask: add --yes to go ahead");
  }
  std::fprintf(stderr,
               "Delete and re-create %zu Deployment%s in place (no pods run between the "
               "two)? [y/N] ",
               plans.size(), plans.size() == 1 ? "" : "s");
  std::fflush(stderr);
  char answer[16] = {};
  if (std::fgets(answer, sizeof answer, stdin) == nullptr ||
      (answer[0] != 'y' && answer[0] != 'Y')) {
    std::fprintf(stderr, "Nothing was changed.\n");
    return runtime::kExitFailed;
  }
  return std::nullopt;
}

// --apply, or the dry run's closing line; the exit code.
int Carry(Migrator& migrator, const std::vector<migrate::Plan>& plans, int refused, bool apply,
          const MigrateSettings& s) {
  if (refused > 0) {
    if (apply) {
      std::fprintf(stderr, "Nothing was changed: %d Deployment%s cannot be migrated.\n", refused,
                   refused == 1 ? "" : "s");
    }
    return runtime::kExitFailed;
  }
  if (!apply) {
    std::fprintf(stderr,
                 "Dry run: nothing was changed. Run again with --apply to carry the plan out.\n");
    return runtime::kExitOk;
  }
  for (const migrate::Plan& p : plans) {
    if (!migrator.Apply(p, SavePath(s, p, plans.size() > 1))) return runtime::kExitFailed;
    std::fprintf(
        stderr,
        "deployment %s/%s: migrated (%s); now run by the in-tree controller as deployment %s/%s\n",
        p.ns.c_str(), p.name.c_str(), std::string(migrate::PlanKindName(p.kind)).c_str(),
        p.ns.c_str(), p.new_name.c_str());
  }
  return runtime::kExitOk;
}

}  // namespace

int RunMigrate(int argc, const char* const* argv) {
  // The one positional argument, TYPE/NAME or TYPE NAME, is taken out first.
  DeploymentTarget target = TakeDeploymentTarget(argc, argv);
  MigrateSettings s;
  runtime::FlagSet flags = MigrateFlags(&s);
  if (const std::optional<int> rc =
          flags.ParseOrExit(static_cast<int>(target.rest.size()), target.rest.data())) {
    return *rc;
  }
  if (const std::optional<int> rc = CheckArgs(flags, s, target)) return *rc;

  auto config = LoadConnection(s.connection);
  if (!config.ok()) {
    Fail("cannot load Kubernetes client configuration: " + config.status().ToString());
    return runtime::kExitUsage;
  }
  if (!s.resume.empty()) {
    kube::Client client(config.value());
    Migrator migrator(client, s.timeout, s.connection.request_timeout);
    return migrator.Resume(s.resume) ? runtime::kExitOk : runtime::kExitFailed;
  }
  const std::string ns = s.all_namespaces ? "" : (s.ns.empty() ? config.value().namespace_ : s.ns);
  kube::Client client(config.value());
  kube::RequestOptions ro;
  ro.timeout = s.connection.request_timeout;
  std::vector<json> deployments;
  if (const std::optional<int> rc = ReadDeployments(client, ro, ns, target, deployments)) {
    return *rc;
  }
  Migrator migrator(client, s.timeout, s.connection.request_timeout);
  std::vector<migrate::Plan> plans;
  const int refused = MakePlans(migrator, s, ns, deployments, plans);
  PrintPlans(plans, s.output);
  if (refused == 0) {
    if (const std::optional<int> rc = Confirm(flags, s, plans)) return *rc;
  }
  return Carry(migrator, plans, refused, s.apply, s);
}

}  // namespace wasd::cmd
