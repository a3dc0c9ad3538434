#include "runtime/flags.h"

#include <charconv>
#include <cstdio>
#include <utility>

#include "base/duration.h"

namespace wasd::runtime {

namespace {

// Help layout: flags in a column this wide, their help beside it.
constexpr std::size_t kHelpColumn = 34;

template <typename T>
bool ParseInteger(std::string_view text, T* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && p == end;
}

bool IsBoolWord(std::string_view v) { return base::ParseBool(v).ok(); }

template <typename D>
FlagSet::Apply DurationApply(D* target, D min) {
  return [target, min](std::string_view v) -> std::string {
    base::Result<std::chrono::nanoseconds> d = base::ParseDuration(v);
    if (!d.ok()) return d.status().message();
    if (*d < min) return "must be at least " + base::FormatDuration(min);
    const auto whole = std::chrono::duration_cast<D>(*d);
    if (whole != *d) return "must be a whole number of " + base::FormatDuration(D(1)) + " units";
    *target = whole;
    return {};
  };
}

std::string& ProgramName() {
  static std::string name = "wasd";
  return name;
}

// Each line of `text` whose first word is "wasd" gets ProgramName() there.
std::string Renamed(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    const std::size_t start = line.find_first_not_of(' ');
    if (start != std::string_view::npos && line.substr(start, 5) == "wasd ") {
      out += line.substr(0, start);
      out += ProgramName();
      out += line.substr(start + 4);
    } else if (line == "wasd") {
      out += ProgramName();
    } else {
      out += line;
    }
    if (nl == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

void SetProgramName(std::string name) { ProgramName() = std::move(name); }

FlagSet::Flag FlagSet::MakeFlag(std::string name, Kind kind, std::string value_name,
                                std::string help) {
  Flag f;
  f.name = std::move(name);
  f.kind = kind;
  f.value_name = std::move(value_name);
  f.help = std::move(help);
  return f;
}

FlagSet::FlagSet(std::string command, std::string synopsis, std::string description)
    : command_(std::move(command)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)) {}

FlagSet& FlagSet::Add(Flag flag) {
  flags_.push_back(std::move(flag));
  return *this;
}

FlagSet& FlagSet::String(std::string name, std::string* target, std::string value_name,
                         std::string help) {
  Flag f = MakeFlag(std::move(name), Kind::kValue, std::move(value_name), std::move(help));
  f.default_text = *target;
  f.apply = [target](std::string_view v) -> std::string {
    if (v.empty()) return "must not be empty";
    *target = std::string(v);
    return {};
  };
  return Add(std::move(f));
}

FlagSet& FlagSet::Bool(std::string name, bool* target, std::string help) {
  Flag f = MakeFlag(std::move(name), Kind::kBool, "", std::move(help));
  f.default_text = *target ? "true" : "false";
  f.apply = [target](std::string_view v) -> std::string {
    base::Result<bool> b = base::ParseBool(v);
    if (!b.ok()) return "want true or false";
    *target = *b;
    return {};
  };
  return Add(std::move(f));
}

FlagSet& FlagSet::Int(std::string name, int* target, int min, int max, std::string help) {
  Flag f = MakeFlag(std::move(name), Kind::kValue, "N", std::move(help));
  f.default_text = std::to_string(*target);
  f.apply = [target, min, max](std::string_view v) -> std::string {
    int n = 0;
    if (!ParseInteger(v, &n) || n < min || n > max) {
      return "want an integer from " + std::to_string(min) + " to " + std::to_string(max);
    }
    *target = n;
    return {};
  };
  return Add(std::move(f));
}

FlagSet& FlagSet::Uint64(std::string name, std::uint64_t* target, std::uint64_t min,
                         std::uint64_t max, std::string help) {
  Flag f = MakeFlag(std::move(name), Kind::kValue, "N", std::move(help));
  f.default_text = std::to_string(*target);
  f.apply = [target, min, max](std::string_view v) -> std::string {
    std::uint64_t n = 0;
    if (!ParseInteger(v, &n) || n < min || n > max) {
      return "want an integer from " + std::to_string(min) + " to " + std::to_string(max);
    }
    *target = n;
    return {};
  };
  return Add(std::move(f));
}

FlagSet& FlagSet::Duration(std::string name, std::chrono::milliseconds* target,
                           std::chrono::milliseconds min, std::string help) {
  Flag f = MakeFlag(std::move(name), Kind::kValue, "DURATION", std::move(help));
  f.default_text = base::FormatDuration(*target);
  f.apply = DurationApply(target, min);
  return Add(std::move(f));
}

FlagSet& FlagSet::Duration(std::string name, std::chrono::seconds* target, std::chrono::seconds min,
                           std::string help) {
  Flag f = MakeFlag(std::move(name), Kind::kValue, "DURATION", std::move(help));
  f.default_text = base::FormatDuration(*target);
  f.apply = DurationApply(target, min);
  return Add(std::move(f));
}

FlagSet& FlagSet::List(std::string name, std::vector<std::string>* target, std::string value_name,
                       std::string help, bool split_commas, bool following) {
  Flag f = MakeFlag(std::move(name), Kind::kList, std::move(value_name), std::move(help));
  f.split_commas = split_commas;
  f.following = following;
  f.apply = [target, split_commas](std::string_view v) -> std::string {
    if (v.empty()) return "must not be empty";
    if (!split_commas) {
      target->emplace_back(v);
      return {};
    }
    std::size_t start = 0;
    while (start <= v.size()) {
      const std::size_t comma = std::min(v.find(',', start), v.size());
      const std::string_view item = v.substr(start, comma - start);
      if (item.empty()) return "empty item in a comma-separated list";
      target->emplace_back(item);
      start = comma + 1;
    }
    return {};
  };
  return Add(std::move(f));
}

FlagSet& FlagSet::Choice(std::string name, std::string* target, std::vector<std::string> choices,
                         std::string help) {
  std::string names;
  for (const std::string& c : choices) names += (names.empty() ? "" : "|") + c;
  Flag f = MakeFlag(std::move(name), Kind::kValue, names, std::move(help));
  f.default_text = *target;
  f.values = choices;
  f.apply = [target, choices = std::move(choices)](std::string_view v) -> std::string {
    std::string want;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (choices[i] == v) {
        *target = choices[i];
        return {};
      }
      want += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    }
    return "want " + want;
  };
  return Add(std::move(f));
}

FlagSet& FlagSet::Custom(std::string name, std::string value_name, std::string help, Apply apply) {
  Flag f = MakeFlag(std::move(name), Kind::kValue, std::move(value_name), std::move(help));
  f.apply = std::move(apply);
  return Add(std::move(f));
}

FlagSet& FlagSet::LogFlags(LogOptions* target) {
  Custom("log-level", "LEVEL", "debug, info, warn or error",
         [target](std::string_view v) -> std::string {
           if (!ParseLogLevel(v, &target->level)) return "want debug, info, warn or error";
           return {};
         })
      .Default(std::string(LogLevelName(target->level)))
      .Values({"debug", "info", "warn", "error"});
  Custom("v", "N", "klog-style verbosity: 0 keeps --log-level, 1 or more logs at debug",
         [target](std::string_view v) -> std::string {
           int n = 0;
           if (!ParseInteger(v, &n) || n < 0 || n > 10) return "want an integer from 0 to 10";
           if (n > 0) target->level = LogLevel::kDebug;
           return {};
         })
      .Default("0");
  Custom("log-format", "json|text", "json: one JSON object per line; text: key=value",
         [target](std::string_view v) -> std::string {
           if (!ParseLogFormat(v, &target->format)) return "want json or text";
           return {};
         })
      .Default(target->format == LogFormat::kJson ? "json" : "text");
  return *this;
}

FlagSet& FlagSet::Alias(char short_name) {
  flags_.back().alias = short_name;
  return *this;
}

FlagSet& FlagSet::Required() {
  flags_.back().required = true;
  flags_.back().default_text.clear();
  return *this;
}

FlagSet& FlagSet::Default(std::string text) {
  flags_.back().default_text = std::move(text);
  return *this;
}

FlagSet& FlagSet::Values(std::vector<std::string> values) {
  flags_.back().values = std::move(values);
  return *this;
}

std::vector<FlagInfo> FlagSet::Flags() const {
  std::vector<FlagInfo> out;
  for (const Flag& f : flags_) {
    FlagInfo info{f.name, f.alias, f.kind != Kind::kBool, f.values};
    // A value name that lists the words themselves ("ecdsa|rsa",
    // "json|text"): those are the values. Upper case is a placeholder
    // ("NAME|IP"), not a value.
    const bool listed = f.value_name.find('|') != std::string::npos &&
                        f.value_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-|") ==
                            std::string::npos;
    if (info.values.empty() && listed) {
      std::string_view rest = f.value_name;
      while (true) {
        const std::size_t bar = rest.find('|');
        if (!rest.substr(0, bar).empty()) info.values.emplace_back(rest.substr(0, bar));
        if (bar == std::string_view::npos) break;
        rest.remove_prefix(bar + 1);
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

FlagSet::Flag* FlagSet::Find(std::string_view name) {
  for (Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

FlagSet::Flag* FlagSet::FindAlias(char c) {
  for (Flag& f : flags_) {
    if (f.alias != 0 && f.alias == c) return &f;
  }
  return nullptr;
}

bool FlagSet::Given(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return f.given;
  }
  return false;
}

bool FlagSet::Fail(std::string message) {
  error_ = std::move(message);
  return false;
}

bool FlagSet::SetValue(Flag& flag, std::string_view value) {
  if (std::string why = flag.apply(value); !why.empty()) {
    return Fail("invalid value \"" + std::string(value) + "\" for --" + flag.name + ": " + why);
  }
  flag.given = true;
  return true;
}

FlagSet::Outcome FlagSet::Parse(int argc, const char* const* argv) {
  Flag* following = nullptr;  // a list flag whose plain values may follow
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return Outcome::kHelp;
    Flag* flag = nullptr;
    std::string_view value;
    bool has_value = false;
    if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      std::string_view name = arg.substr(2);
      if (const std::size_t eq = name.find('='); eq != std::string_view::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      flag = Find(name);
      if (flag == nullptr) {
        Fail("unknown flag --" + std::string(name));
        return Outcome::kError;
      }
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
      // pflag's shorthand forms: "-o json", "-o=json", "-ojson", and
      // booleans run together, "-Rf DIR" or "-yA": each letter is a flag, and
      // the first that takes a value takes the rest of the word ("=" dropped).
      std::size_t k = 1;
      while (true) {
        flag = FindAlias(arg[k]);
        if (flag == nullptr) {
          Fail(k == 1 && arg.size() == 2 ? "unknown flag " + std::string(arg)
                                         : "unknown shorthand flag '" + std::string(1, arg[k]) +
                                               "' in " + std::string(arg));
          return Outcome::kError;
        }
        const std::string_view tail = arg.substr(k + 1);
        if (tail.empty()) break;
        if (flag->kind != Kind::kBool || tail[0] == '=') {
          value = tail[0] == '=' ? tail.substr(1) : tail;
          has_value = true;
          break;
        }
        if (!SetValue(*flag, "true")) return Outcome::kError;
        ++k;
      }
    } else if (following != nullptr && arg != "--") {
      if (!SetValue(*following, arg)) return Outcome::kError;
      continue;
    } else {
      Fail("unexpected argument \"" + std::string(arg) + "\" (flags start with --)");
      return Outcome::kError;
    }
    following = nullptr;
    if (!has_value) {
      if (flag->kind == Kind::kBool) {
        // "--flag false": a boolean word right after a boolean flag is its
        // value (Go would take it for an argument, and no wasd command takes
        // plain arguments after a boolean).
        if (i + 1 < argc && IsBoolWord(argv[i + 1])) {
          value = argv[++i];
        } else {
          value = "true";
        }
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        Fail("flag --" + flag->name + " needs a value");
        return Outcome::kError;
      }
    }
    if (!SetValue(*flag, value)) return Outcome::kError;
    if (flag->following) following = flag;
  }
  for (const Flag& f : flags_) {
    if (f.required && !f.given) {
      Fail("flag --" + f.name + " is required");
      return Outcome::kError;
    }
  }
  return Outcome::kRun;
}

std::string FlagSet::Usage() const {
  std::string out = "Usage: " + Renamed(synopsis_) + "\n";
  if (!description_.empty()) out += "\n" + description_ + "\n";
  out += "\nFlags:\n";
  for (const Flag& f : flags_) {
    std::string left = "  ";
    left += f.alias != 0 ? std::string("-") + f.alias + ", " : "    ";
    left += "--" + f.name;
    if (f.kind != Kind::kBool) left += " " + f.value_name;
    if (f.kind == Kind::kBool) left += "[=BOOL]";
    std::string help = f.help;
    if (f.required) {
      help += " (required)";
    } else if (!f.default_text.empty()) {
      help += " (default " + f.default_text + ")";
    }
    if (f.kind == Kind::kList) help += " (repeatable)";
    // A long flag gets its help on the next line, so the column holds.
    if (left.size() + 2 > kHelpColumn) {
      left += "\n";
      left += std::string(kHelpColumn, ' ');
    } else {
      left.resize(kHelpColumn, ' ');
    }
    out += left;
    for (char c : help) {
      out += c;
      if (c == '\n') out += std::string(kHelpColumn, ' ');
    }
    out += "\n";
  }
  out += "  -h, --help";
  out += std::string(kHelpColumn - 12, ' ');
  out += "show this text\n";
  if (!epilog_.empty()) out += "\n" + epilog_;
  if (!out.empty() && out.back() != '\n') out += "\n";
  return out;
}

int FlagSet::Report(Outcome outcome) const {
  if (outcome == Outcome::kHelp) {
    const std::string text = Usage();
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  return UsageError(error_);
}

std::optional<int> FlagSet::ParseOrExit(int argc, const char* const* argv) {
  const Outcome outcome = Parse(argc, argv);
  if (outcome == Outcome::kRun) return std::nullopt;
  return Report(outcome);
}

int FlagSet::UsageError(std::string_view message) const {
  const std::string command = Renamed(command_);
  std::fprintf(stderr, "%s: %.*s\nRun '%s --help' for usage.\n", command.c_str(),
               static_cast<int>(message.size()), message.data(), command.c_str());
  return kExitUsage;
}

}  // namespace wasd::runtime
