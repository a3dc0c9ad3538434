// `wasd check`: the flags (cmd/flags.cc CheckFlags), then check::Run.
#include "check/check.h"
#include "cmd/commands.h"
#include "cmd/flags.h"

namespace wasd::cmd {

int RunCheck(int argc, const char* const* argv) {
  CheckSettings settings;
  base::FlagSet flags = CheckFlags(&settings);
  if (const std::optional<int> rc = flags.ParseOrExit(argc, argv)) return *rc;
  if (settings.files.empty()) return flags.UsageError("no manifests given (use -f FILE)");
  return check::Run({settings.files, settings.recursive, settings.output});
}

}  // namespace wasd::cmd
