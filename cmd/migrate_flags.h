// The command line of `wasd migrate` (also `kubectl wasd migrate`): its own
// table beside cmd/flags.h, over the same runtime::FlagSet, so that it reads
// flags, durations and booleans like every other subcommand.
//
// Not thread-safe; used at start-up.
#ifndef WASD_CMD_MIGRATE_FLAGS_H_
#define WASD_CMD_MIGRATE_FLAGS_H_

#include <chrono>
#include <string>

#include "cmd/flags.h"
#include "runtime/flags.h"

namespace wasd::cmd {

struct MigrateSettings {
  std::string ns;               // "" = the kubeconfig context's namespace
  bool all = false;             // --all: every wasd-managed Deployment of the namespace
  bool all_namespaces = false;  // -A: ... of every namespace
  // in-place | side-by-side; "" = not given (a dry run shows in-place;
  // --apply refuses: a plan that deletes is never a default).
  std::string plan;
  std::string new_name;  // side by side; "" = NAME-intree
  bool apply = false;    // run the plan (default: print it)
  bool yes = false;      // --yes: no confirmation for in-place
  // --save-manifest: where --apply saves each new manifest before it writes
  // anything ("" = ./wasd-migrate-NS-NAME.yaml; with several Deployments, a
  // directory).
  std::string save_manifest;
  std::string resume;           // --resume FILE: finish an interrupted in-place hand-over
  std::string output = "yaml";  // yaml | json
  // --kubeconfig, --context, --cluster, --user, --request-timeout (the
  // deadline of each request).
  ConnectionSettings connection;
  // --apply: the bound of each wait (the old objects gone, the new gang
  // Available), per Deployment.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};
runtime::FlagSet MigrateFlags(MigrateSettings* settings);

}  // namespace wasd::cmd

#endif  // WASD_CMD_MIGRATE_FLAGS_H_
