// FlagSet: the one command-line parser of every wasd subcommand, so that all
// of them read flags, durations and booleans alike, print --help in one
// format and report a mistake in one style.
//
// Grammar (Go's flag package with pflag's short aliases):
//   --name value, --name=value     a flag with a value
//   -n value, -n=value, -nvalue    the same by its one-letter alias
//   -ab, -abvalue                  aliases run together: every letter but the
//                                  last is a boolean set to true; the first
//                                  one that takes a value takes the rest
//   --name, --name=false            a boolean; "--name false" (a boolean word
//                                   after a boolean flag) is read as its value
//   --list a --list b, --list a,b   a list flag may repeat; one that takes
//                                   "following" values also takes --list a b c
//   --help, -h                      the usage text on stdout, exit 0
// A flag given twice keeps the last value (a list keeps every value).
// Durations are Go's (base/duration.h): 500ms, 1.5s, 1h30m — never a bare
// number. A mistake is reported as
//   wasd SUB: <what is wrong>
//   Run 'wasd SUB --help' for usage.
// on stderr with exit code 2.
//
// Register flags against the fields of a config struct (the targets), then
// call Parse once; the targets keep their defaults unless a flag is given.
// The help text shows every flag with its value name, its help and the
// default read from the target at registration.
//
// Not thread-safe; used by one thread at start-up.
#ifndef WASD_RUNTIME_FLAGS_H_
#define WASD_RUNTIME_FLAGS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/log.h"

namespace wasd::runtime {

// Exit codes every subcommand shares.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// How help and mistakes name the binary: "wasd" (the default), or "kubectl
// wasd" when kubectl runs it as the plugin kubectl-wasd (cmd/main.cc). It
// replaces the leading "wasd" of each command name and synopsis line.
void SetProgramName(std::string name);

// What shell completion needs of one flag (cmd/completion.h): its names,
// whether it takes a value, and the values it may take ("" free-form: none).
struct FlagInfo {
  std::string name;  // without "--"
  char alias = 0;    // 0: no one-letter alias
  bool takes_value = true;
  std::vector<std::string> values;  // a Choice's choices, Values(), or "a|b" value names
};

class FlagSet {
 public:
  // `command` is what errors name ("wasd webhook"); `synopsis` the first
  // line after "Usage: " ("wasd webhook --tls-cert-file FILE ... [flags]");
  // `description` the paragraph(s) after it.
  FlagSet(std::string command, std::string synopsis, std::string description);

  // A value is applied by a function that returns "" or why it is unusable.
  using Apply = std::function<std::string(std::string_view)>;

  // Registration. `value_name` is shown in the help (FILE, N, DURATION);
  // help text may hold '\n' for more lines. Each returns *this so that
  // Alias/Required/Default can follow.
  FlagSet& String(std::string name, std::string* target, std::string value_name, std::string help);
  FlagSet& Bool(std::string name, bool* target, std::string help);
  FlagSet& Int(std::string name, int* target, int min, int max, std::string help);
  FlagSet& Uint64(std::string name, std::uint64_t* target, std::uint64_t min, std::uint64_t max,
                  std::string help);
  // A duration of at least `min` (a negative value is never accepted).
  // Targets of whole seconds refuse a finer value rather than round it.
  FlagSet& Duration(std::string name, std::chrono::milliseconds* target,
                    std::chrono::milliseconds min, std::string help);
  FlagSet& Duration(std::string name, std::chrono::seconds* target, std::chrono::seconds min,
                    std::string help);
  // A repeatable flag; values also split at commas when `split_commas`.
  // `following`: plain arguments after it are more values (kubectl -f a b).
  FlagSet& List(std::string name, std::vector<std::string>* target, std::string value_name,
                std::string help, bool split_commas = true, bool following = false);
  // One of `choices`.
  FlagSet& Choice(std::string name, std::string* target, std::vector<std::string> choices,
                  std::string help);
  // Anything else: `apply` checks and stores the value.
  FlagSet& Custom(std::string name, std::string value_name, std::string help, Apply apply);
  // --log-level, --v and --log-format into `target`.
  FlagSet& LogFlags(LogOptions* target);

  // Modifiers of the flag registered last.
  FlagSet& Alias(char short_name);     // -x
  FlagSet& Required();                 // Parse fails without it
  FlagSet& Default(std::string text);  // shown as "(default text)"; "" hides it
  // The values shell completion offers for a Custom flag (a Choice has its
  // choices, a value name "a|b|c" those three).
  FlagSet& Values(std::vector<std::string> values);

  // Text after the flags in --help (durations, signals, exit codes).
  void SetEpilog(std::string text) { epilog_ = std::move(text); }

  enum class Outcome { kRun, kHelp, kError };
  // Parses argv[1..argc) (argv[0] is the subcommand).
  Outcome Parse(int argc, const char* const* argv);

  const std::string& error() const { return error_; }
  // True when the flag was given on the command line.
  bool Given(std::string_view name) const;
  std::string Usage() const;
  // Every flag in registration order, for shell completion.
  std::vector<FlagInfo> Flags() const;

  // After Parse: the usage on stdout (kHelp, exit 0) or the error in the one
  // style on stderr (kError, exit 2).
  int Report(Outcome outcome) const;
  // Parse, then Report unless the command is to run: the exit code to
  // return at once, or nothing when the command should run.
  std::optional<int> ParseOrExit(int argc, const char* const* argv);
  // The one error style for a mistake found after parsing (a combination of
  // flags): prints it and returns kExitUsage.
  int UsageError(std::string_view message) const;

 private:
  enum class Kind { kValue, kBool, kList };
  struct Flag {
    std::string name;
    char alias = 0;
    Kind kind = Kind::kValue;
    std::string value_name;
    std::string help;
    std::string default_text;
    bool required = false;
    bool split_commas = false;
    bool following = false;
    bool given = false;
    std::vector<std::string> values;  // Values() or a Choice's choices
    Apply apply;
  };

  static Flag MakeFlag(std::string name, Kind kind, std::string value_name, std::string help);
  FlagSet& Add(Flag flag);
  Flag* Find(std::string_view name);
  Flag* FindAlias(char c);
  bool SetValue(Flag& flag, std::string_view value);
  bool Fail(std::string message);

  std::string command_;
  std::string synopsis_;
  std::string description_;
  std::string epilog_;
  std::vector<Flag> flags_;
  std::string error_;
};

}  // namespace wasd::runtime

#endif  // WASD_RUNTIME_FLAGS_H_
