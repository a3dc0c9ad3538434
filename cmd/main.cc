// wasd: one binary, several subcommands (docs/design.md "Command line").
#include <gnu/libc-version.h>
#include <openssl/crypto.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "build_version.h"  // WASD_VERSION, WASD_REVISION, WASD_TREE_STATE
#include "check/yaml_output.h"
#include "cmd/commands.h"
#include "cmd/completion.h"
#include "cmd/flags.h"
#include "runtime/flags.h"

#ifndef WASD_STATIC_DEPS
#define WASD_STATIC_DEPS 0
#endif
#ifndef WASD_FULLY_STATIC
#define WASD_FULLY_STATIC 0
#endif

namespace wasd::cmd {

namespace {

// The compiler's __DATE__ ("Dec  7 2026") and __TIME__ ("09:44:22") as
// ISO 8601, "2026-12-07T09:44:22" (the build machine's local time, or UTC
// when SOURCE_DATE_EPOCH is set, as scripts/release.sh does).
std::string BuildDate() {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const std::string_view date = __DATE__;
  const std::size_t month = kMonths.find(date.substr(0, 3)) / 3 + 1;
  std::string out(date.substr(7, 4));
  out += month < 10 ? "-0" : "-";
  out += std::to_string(month);
  out += '-';
  out += date[4] == ' ' ? '0' : date[4];
  out += date[5];
  out += 'T';
  out += __TIME__;
  return out;
}

std::string Compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#else
  return std::string("gcc ") + __VERSION__;
#endif
}

std::string Platform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

}  // namespace

int RunVersion(int argc, const char* const* argv) {
  VersionSettings s;
  runtime::FlagSet flags = VersionFlags(&s);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  if (s.short_form && flags.Given("output")) {
    return flags.UsageError("--short prints the version alone; leave out -o");
  }
  const std::string_view revision = WASD_REVISION;
  const std::string_view tree_state = WASD_TREE_STATE;
  // Which OpenSSL answers TLS matters for security updates: a static build
  // carries its own copy (CMake WASD_STATIC_DEPS, SECURITY.md "Supply chain").
  const char* openssl_linkage = WASD_STATIC_DEPS ? "static" : "dynamic";
  // The same for glibc in the fully static build (the container image).
  const char* glibc_linkage = WASD_FULLY_STATIC ? "static" : "dynamic";
  if (s.short_form) {
    std::printf("%s\n", WASD_VERSION);
    return runtime::kExitOk;
  }
  if (s.output == "text") {
    std::string build = revision.empty() ? "" : "revision " + std::string(revision) + ", ";
    if (tree_state == "dirty") build += "modified, ";
    std::printf("wasd %s (%sbuilt %s %s, C++ %ld, compiler %s)\n", WASD_VERSION, build.c_str(),
                __DATE__, __TIME__, static_cast<long>(__cplusplus), __VERSION__);
    std::printf("%s, %s\n", OpenSSL_version(OPENSSL_VERSION),
                WASD_STATIC_DEPS ? "linked statically (rebuild wasd for an OpenSSL update)"
                                 : "linked dynamically");
    std::printf("glibc %s, %s\n", gnu_get_libc_version(),
                WASD_FULLY_STATIC ? "linked statically (rebuild wasd for a glibc update)"
                                  : "linked dynamically");
    return runtime::kExitOk;
  }
  // -o json|yaml: one object for scripts, in the spirit of `kubectl version
  // -o json`; revision and treeState only when the build came from git.
  nlohmann::ordered_json out;
  out["version"] = WASD_VERSION;
  if (!revision.empty()) out["revision"] = revision;
  if (!tree_state.empty()) out["treeState"] = tree_state;
  out["buildDate"] = BuildDate();
  out["compiler"] = Compiler();
  out["cplusplus"] = static_cast<long>(__cplusplus);
  out["platform"] = Platform();
  out["openssl"] = {{"version", OpenSSL_version(OPENSSL_VERSION)}, {"linkage", openssl_linkage}};
  out["glibc"] = {{"version", gnu_get_libc_version()}, {"linkage", glibc_linkage}};
  const std::string text =
      s.output == "json" ? out.dump(2) + "\n" : check::ToYaml(nlohmann::json(out));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return runtime::kExitOk;
}

}  // namespace wasd::cmd

namespace {

// How the binary was invoked: "kubectl wasd" when kubectl runs it as the
// plugin kubectl-wasd (a link to wasd), else "wasd". Both behave alike.
const char* g_program = "wasd";

void Usage(std::FILE* out) {
  std::fprintf(out,
               "wasd — Workload-Aware Scheduling for Kubernetes Deployments (KEP-6276)\n\n"
               "Usage: %s <command> [flags]\n\n"
               "Commands:\n"
               "  webhook     HTTPS admission server (AdmissionReview v1)\n"
               "  reconciler  companion controller: Workloads and PodGroups\n"
               "  certs       generate certificates, inject the CA bundle\n"
               "  check       run the admission rules on manifests offline\n"
               "  selftest    check an installed wasd end to end (helm test)\n"
               "  explain     why is a Deployment's gang Pending? (also kubectl wasd explain)\n"
               "  migrate     hand Deployments to the in-tree controller (kubectl wasd migrate)\n"
               "  version     print version information\n"
               "  completion  print a shell completion script (bash, zsh, fish)\n\n"
               "Run '%s <command> --help' for the flags of a command.\n",
               g_program, g_program);
}

}  // namespace

namespace {

int Dispatch(int argc, const char* const* argv) {
  if (argc < 2) {
    Usage(stderr);
    return 2;
  }
  const std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || (cmd == "help" && argc == 2)) {
    Usage(stdout);
    return 0;
  }
  if (cmd == "help") {
    // `wasd help check` is `wasd check --help` (and `wasd help certs
    // rotate` is `wasd certs rotate --help`), as in kubectl and Helm.
    std::vector<const char*> args(argv + 1, argv + argc);
    args.push_back("--help");
    args.push_back(nullptr);
    return Dispatch(static_cast<int>(args.size()) - 1, args.data());
  }
  if (cmd == "webhook") return wasd::cmd::RunWebhook(argc - 1, argv + 1);
  if (cmd == "check") return wasd::cmd::RunCheck(argc - 1, argv + 1);
  if (cmd == "certs") return wasd::cmd::RunCerts(argc - 1, argv + 1);
  if (cmd == "reconciler") return wasd::cmd::RunReconciler(argc - 1, argv + 1);
  if (cmd == "selftest") return wasd::cmd::RunSelftest(argc - 1, argv + 1);
  if (cmd == "explain") return wasd::cmd::RunExplain(argc - 1, argv + 1);
  if (cmd == "migrate") return wasd::cmd::RunMigrate(argc - 1, argv + 1);
  if (cmd == "completion") {
    return wasd::cmd::RunCompletion(
        argc - 1, argv + 1, g_program == std::string_view("wasd") ? "wasd" : "kubectl-wasd");
  }
  if (cmd == "__complete") return wasd::cmd::RunComplete(argc - 1, argv + 1);
  if (cmd == "version" || cmd == "--version") return wasd::cmd::RunVersion(argc - 1, argv + 1);
  std::fprintf(stderr, "%s: unknown command \"%s\"\nRun '%s --help' for usage.\n", g_program,
               argv[1], g_program);
  return 2;
}

}  // namespace

// No crash from the command line, whatever the input: anything a subcommand
// did not handle becomes "error: ..." and exit code 2 (unusable input).
int main(int argc, char** argv) {
  if (argc > 0 && argv[0] != nullptr) {
    const std::string_view self = argv[0];
    const std::size_t slash = self.rfind('/');
    if (self.substr(slash == std::string_view::npos ? 0 : slash + 1) == "kubectl-wasd") {
      g_program = "kubectl wasd";
      wasd::runtime::SetProgramName(g_program);
    }
  }
  try {
    return Dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "error: unexpected failure\n");
  }
  return 2;
}
