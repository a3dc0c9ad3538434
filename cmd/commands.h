// The subcommands of the wasd binary. Each takes the arguments after its
// name (argv[0] is the subcommand), parses its flags with its table in
// cmd/flags.h (--help on each), runs, and returns the process exit code
// (runtime::kExitOk, kExitFailed, kExitUsage).
//
// Thread-safety: called once, from main.
#ifndef WASD_CMD_COMMANDS_H_
#define WASD_CMD_COMMANDS_H_

namespace wasd::cmd {

int RunWebhook(int argc, const char* const* argv);     // webhook_command.cc
int RunCheck(int argc, const char* const* argv);       // check_command.cc
int RunCerts(int argc, const char* const* argv);       // certs_command.cc
int RunReconciler(int argc, const char* const* argv);  // reconciler_command.cc
int RunVersion(int argc, const char* const* argv);     // main.cc
int RunSelftest(int argc, const char* const* argv);    // selftest_command.cc
int RunExplain(int argc, const char* const* argv);     // explain_command.cc
int RunMigrate(int argc, const char* const* argv);     // migrate_command.cc
// `wasd certs uninstall` (certs_uninstall.cc), dispatched by RunCerts.
int RunCertsUninstall(int argc, const char* const* argv);

}  // namespace wasd::cmd

#endif  // WASD_CMD_COMMANDS_H_
