// `wasd check`: the flags (cmd/flags.cc CheckFlags), then check::Run.
#include <algorithm>

#include "check/check.h"
#include "cmd/commands.h"
#include "cmd/flags.h"

namespace wasd::cmd {

int RunCheck(int argc, const char* const* argv) {
  CheckSettings settings;
  runtime::FlagSet flags = CheckFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  if (std::string e = BackendFlagsError(settings.backends); !e.empty()) {
    return flags.UsageError(e);
  }
  if (settings.capabilities || (settings.files.empty() && flags.Given("backend"))) {
    if (!settings.files.empty()) return flags.UsageError("--capabilities takes no -f");
    return check::PrintCapabilities(settings.backends, flags.Given("backend"));
  }
  if (settings.files.empty()) {
    return flags.UsageError("no manifests given (use -f FILE, or --capabilities)");
  }
  // Standard input can be read once: a second "-f -" would see it empty.
  if (std::count(settings.files.begin(), settings.files.end(), "-") > 1) {
    return flags.UsageError("-f - (standard input) may be given only once");
  }
  return check::Run({settings.files, settings.recursive, settings.output, settings.backends,
                     settings.scheduling_api_version});
}

}  // namespace wasd::cmd
