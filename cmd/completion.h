// Shell completion of the wasd command line (`wasd __complete`, `wasd
// completion bash|zsh|fish`, and kubectl's `kubectl_complete-wasd`).
//
// The candidates come from the command tree: each command's flags are read
// from the very FlagSet its parser uses (cmd/flags.h), so completion cannot
// offer a flag the command does not take, nor miss one it does.
//
// Not thread-safe; used once per process.
#ifndef WASD_CMD_COMPLETION_H_
#define WASD_CMD_COMPLETION_H_

#include <string>
#include <string_view>
#include <vector>

#include "runtime/flags.h"

namespace wasd::cmd {

// One command of the tree: its subcommands (certs: generate, inject-ca, ...)
// or its flags and the candidates of its first plain argument.
struct CompletionNode {
  std::string name;
  std::vector<runtime::FlagInfo> flags;
  std::vector<CompletionNode> subcommands;
  std::vector<std::string> arguments;  // the first argument: "deployment/", "bash", ...
};

// The candidates for the last of `words` (the word being completed, maybe
// ""), given the words before it (after the program name), one per entry,
// each starting with that last word:
//   a subcommand where one is expected;
//   the flags of the command reached ("--name", and "-x" once "-" is typed);
//   after a flag that takes a value (--output, -o, --output=, -o=, -o...):
//   its values, none for a free-form one;
//   the command's first argument (explain: "deployment/").
// `help` as the first word completes command names only.
std::vector<std::string> Complete(const CompletionNode& root,
                                  const std::vector<std::string>& words);

// The tree of the wasd binary (completion_command.cc).
CompletionNode CommandTree();

// The script for `shell` ("bash", "zsh", "fish") that completes `program`
// ("wasd" or "kubectl-wasd") by running `program __complete WORDS...`; ""
// for another shell.
std::string CompletionScript(std::string_view shell, std::string_view program);

// `wasd __complete WORDS...` (hidden) and `wasd completion SHELL`.
int RunComplete(int argc, const char* const* argv);
int RunCompletion(int argc, const char* const* argv, std::string_view program);

}  // namespace wasd::cmd

#endif  // WASD_CMD_COMPLETION_H_
