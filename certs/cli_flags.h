// Command-line flags of the `wasd certs` subcommands: a small table-driven
// parser. Values come as "--flag value" or "--flag=value"; repeatable flags
// also take "--flag a,b" and "--flag a b" (plain arguments up to the next
// flag); switches are "--flag", "--flag=true" or "--flag=false". Pure; the
// values are plain data (thread-safety of std::map).
#ifndef WASD_CERTS_CLI_FLAGS_H_
#define WASD_CERTS_CLI_FLAGS_H_

#include <map>
#include <string>
#include <vector>

namespace wasd::certs {

// The flags of one subcommand, by name without the leading "--".
struct FlagSpec {
  std::vector<std::string> single;    // take one value, at most once
  std::vector<std::string> repeated;  // take values, may repeat
  std::vector<std::string> switches;  // take no value
};

struct ParsedFlags {
  std::map<std::string, std::string> values;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, bool> switches;
  bool help = false;  // --help or -h was given (parsing stopped there)

  // The value of a single flag, or `fallback` when it was not given.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value of a repeatable flag, in order (empty when not given).
  std::vector<std::string> List(const std::string& name) const;
  // True when the switch was given (and not as =false).
  bool On(const std::string& name) const;
};

// Parses argv[1..argc) (argv[0] is the subcommand). Returns false with
// *error set to one line on an unknown flag, a missing value, an unexpected
// positional argument, a bad switch value or a repeated single-value flag.
bool ParseFlags(int argc, char** argv, const FlagSpec& spec, ParsedFlags* out,
                std::string* error);

}  // namespace wasd::certs

#endif  // WASD_CERTS_CLI_FLAGS_H_
