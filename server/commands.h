// The subcommands of the wasd binary. Each takes the arguments after its
// name (argv[0] is the subcommand), parses its own flags (--help on each),
// runs, and returns the process exit code.
#ifndef WASD_SERVER_COMMANDS_H_
#define WASD_SERVER_COMMANDS_H_

namespace wasd::server {

int RunWebhook(int argc, char** argv);     // webhook_command.cc
int RunCheck(int argc, char** argv);       // check_command.cc
int RunCerts(int argc, char** argv);       // certs_command.cc
int RunReconciler(int argc, char** argv);  // reconciler_command.cc
int RunVersion(int argc, char** argv);     // main.cc
int RunSelftest(int argc, char** argv);    // selftest_command.cc
// `wasd certs uninstall` (certs_uninstall.cc), dispatched by RunCerts.
int RunCertsUninstall(int argc, char** argv);

}  // namespace wasd::server

#endif  // WASD_SERVER_COMMANDS_H_
