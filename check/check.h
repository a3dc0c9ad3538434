// check::Run: `wasd check` without its command line — manifests in,
// verdicts out. It runs the webhook's CREATE rules (rules/) on every
// apps/v1 Deployment after the defaults kube-apiserver applies before
// admission (check/defaults.h), prints denials the way kubectl shows them,
// and shows the Workload and PodGroup wasd would create. Only wasd's
// annotation makes objects; a Deployment with spec.scheduling alone is the
// in-tree integration's (docs/design.md Q22): judged by the KEP's rules, labelled
// so, nothing shown for it.
//
// Exit codes: 0 every Deployment allowed; 1 at least one denied; 2 unusable
// input (missing file, not YAML/JSON).
//
// Not thread-safe (writes to stdout and stderr); called once per process.
#ifndef WASD_CHECK_CHECK_H_
#define WASD_CHECK_CHECK_H_

#include <string>
#include <vector>

#include "workloadbuilder/backend_compile.h"

namespace wasd::check {

struct Options {
  std::vector<std::string> files;  // files, directories, or "-" for stdin
  bool recursive = false;          // read subdirectories of a directory
  std::string output = "text";     // text, yaml, json or junit
  // --backend, --allowed-backends and the cluster facts, as the webhook has
  // them: which backend a Deployment gets and what it may express.
  workloadbuilder::BackendSettings backends;
  // --scheduling-api-version: the version in the apiVersion
  // (scheduling.k8s.io/VERSION) of the Workload and PodGroup shown, and of
  // the PodGroup's reference to its Workload.
  std::string scheduling_api_version = "v1";
};

int Run(const Options& options);

// The capability table on stdout: every backend, or only
// `settings.backend` when `only_chosen`. Returns 0.
int PrintCapabilities(const workloadbuilder::BackendSettings& settings, bool only_chosen);

}  // namespace wasd::check

#endif  // WASD_CHECK_CHECK_H_
