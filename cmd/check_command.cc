// `wasd check`: the flags (cmd/flags.cc CheckFlags), then check::Run.
#include "check/check.h"
#include "cmd/commands.h"
#include "cmd/flags.h"

namespace wasd::cmd {

int RunCheck(int argc, const char* const* argv) {
  CheckSettings settings;
  base::FlagSet flags = CheckFlags(&settings);
  const base::FlagSet::Outcome outcome = flags.Parse(argc, argv);
  if (outcome != base::FlagSet::Outcome::kRun) return flags.Report(outcome);
  if (settings.files.empty()) return flags.UsageError("no manifests given (use -f FILE)");
  return check::Run({settings.files, settings.recursive, settings.output});
}

}  // namespace wasd::cmd
