// `wasd __complete` and `wasd completion bash|zsh|fish` (cmd/completion.h).
#include <cstdio>
#include <optional>
#include <string>

#include "cmd/completion.h"
#include "cmd/flags.h"
#include "cmd/migrate_flags.h"

namespace wasd::cmd {

namespace {

CompletionNode Node(std::string name, const runtime::FlagSet& flags,
                    std::vector<std::string> arguments = {}) {
  return CompletionNode{std::move(name), flags.Flags(), {}, std::move(arguments)};
}

// "kubectl-wasd" -> "_kubectl_wasd": a shell function name.
std::string FunctionName(std::string_view program) {
  std::string out = "_";
  for (char c : program) out += (c == '-' ? '_' : c);
  return out;
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// PROG: the program completed and run; FN: its completion function.
constexpr char kBash[] = R"(# bash completion for PROG: source <(PROG completion bash)
FN() {
  local line=${COMP_LINE:0:COMP_POINT}
  local -a words cands
  read -ra words <<< "$line"
  if [[ -z $line || $line == *[[:space:]] ]]; then words+=(""); fi
  local cur=${words[${#words[@]}-1]}
  mapfile -t cands < <(PROG __complete "${words[@]:1}" 2>/dev/null)
  # readline replaces only the text after the last = or : (COMP_WORDBREAKS).
  local head=${cur%"${cur##*[=:]}"}
  COMPREPLY=()
  local c
  for c in "${cands[@]}"; do
    [[ -n $c ]] && COMPREPLY+=("${c#"$head"}")
  done
  if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then
    compopt -o nospace 2>/dev/null
  fi
  return 0
}
complete -o default -F FN PROG
)";

constexpr char kZsh[] = R"(#compdef PROG
# zsh completion for PROG: source <(PROG completion zsh) after compinit
FN() {
  local -a cands spaced bare
  local c
  cands=("${(@f)$(PROG __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  for c in "${cands[@]}"; do
    [[ -z $c ]] && continue
    if [[ $c == */ ]]; then bare+=("$c"); else spaced+=("$c"); fi
  done
  if (( ${#spaced} + ${#bare} == 0 )); then
    _files
    return
  fi
  compadd -Q -a spaced
  compadd -Q -S '' -a bare
}
# Sourced, this registers FN; autoloaded from a file _PROG on $fpath (the
# "#compdef" line), compinit has registered it and this body is the first
# call, which must complete too.
if [[ ${funcstack[1]-} == FN ]]; then
  FN "$@"
else
  compdef FN PROG
fi
)";

constexpr char kFish[] = R"(# fish completion for PROG: PROG completion fish | source
function FN
    set -l words (commandline -opc)
    set -e words[1]
    set -l cur (commandline -ct)
    set -l cands (PROG __complete $words "$cur" 2>/dev/null)
    if set -q cands[1]
        printf '%s\n' $cands
    else
        # Nothing known (a file, a name): paths, as bash and zsh fall back to.
        __fish_complete_path "$cur"
    end
end
complete -c PROG -f -a '(FN)'
)";

runtime::FlagSet CompletionFlags() {
  return runtime::FlagSet(
      "wasd completion", "wasd completion bash|zsh|fish",
      "Prints a script that completes wasd's commands, flags and flag values in\n"
      "that shell (it runs `wasd __complete WORDS...`):\n"
      "  bash: source <(wasd completion bash)        (e.g. in ~/.bashrc)\n"
      "  zsh:  source <(wasd completion zsh)         (after compinit)\n"
      "  fish: wasd completion fish | source\n"
      "As kubectl-wasd it completes kubectl-wasd; `kubectl wasd ...` is completed by\n"
      "kubectl itself through kubectl_complete-wasd (shipped in the plugin archive).");
}

}  // namespace

CompletionNode CommandTree() {
  CompletionNode root;
  root.name = "wasd";
  root.flags = {runtime::FlagInfo{"version", 0, false, {}}};
  server::WebhookConfig webhook;
  ReconcilerSettings reconciler;
  CheckSettings check;
  SelftestSettings selftest;
  ExplainSettings explain;
  MigrateSettings migrate;
  VersionSettings version;
  GenerateSettings generate;
  InjectCaSettings inject;
  RotateSettings rotate;
  UninstallSettings uninstall;
  CompletionNode certs;
  certs.name = "certs";
  certs.subcommands = {
      Node("generate", GenerateFlags(&generate)), Node("inject-ca", InjectCaFlags(&inject)),
      Node("rotate", RotateFlags(&rotate)), Node("uninstall", UninstallFlags(&uninstall))};
  root.subcommands = {Node("webhook", WebhookFlags(&webhook)),
                      Node("reconciler", ReconcilerFlags(&reconciler)),
                      std::move(certs),
                      Node("check", CheckFlags(&check)),
                      Node("selftest", SelftestFlags(&selftest)),
                      Node("explain", ExplainFlags(&explain), {"deployment/"}),
                      Node("migrate", MigrateFlags(&migrate), {"deployment/"}),
                      Node("version", VersionFlags(&version)),
                      Node("completion", CompletionFlags(), {"bash", "zsh", "fish"}),
                      CompletionNode{"help", {}, {}, {}}};
  return root;
}

std::string CompletionScript(std::string_view shell, std::string_view program) {
  std::string text;
  if (shell == "bash") {
    text = kBash;
  } else if (shell == "zsh") {
    text = kZsh;
  } else if (shell == "fish") {
    text = kFish;
  } else {
    return {};
  }
  // FN first: PROG would otherwise match inside it.
  return Replace(Replace(text, "FN", FunctionName(program)), "PROG", program);
}

int RunComplete(int argc, const char* const* argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) words.emplace_back();
  for (const std::string& c : Complete(CommandTree(), words)) std::printf("%s\n", c.c_str());
  return runtime::kExitOk;
}

int RunCompletion(int argc, const char* const* argv, std::string_view program) {
  runtime::FlagSet flags = CompletionFlags();
  if (argc == 2 && argv[1][0] != '-') {
    const std::string script = CompletionScript(argv[1], program);
    if (script.empty()) {
      return flags.UsageError("unknown shell \"" + std::string(argv[1]) +
                              "\": want bash, zsh or fish");
    }
    std::fwrite(script.data(), 1, script.size(), stdout);
    return runtime::kExitOk;
  }
  // Flags (only --help) go to the FlagSet: --help prints the usage, any
  // other is reported as every command reports an unknown flag.
  std::vector<const char*> dashed{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') dashed.push_back(argv[i]);
  }
  if (dashed.size() > 1) {
    if (const std::optional<int> rc =
            flags.ParseOrExit(static_cast<int>(dashed.size()), dashed.data())) {
      return *rc;
    }
  }
  if (argc < 2) return flags.UsageError("name a shell: bash, zsh or fish");
  return flags.UsageError("want one shell: bash, zsh or fish");
}

}  // namespace wasd::cmd
