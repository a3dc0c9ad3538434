// Shell completion (issue 42): the candidates Complete() gives for the words
// typed, over the real command tree, whose flags are the commands' own
// FlagSets — so a flag added to a command is completed without more work.
#include "cmd/completion.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cmd/flags.h"

namespace wasd::cmd {
namespace {

using Words = std::vector<std::string>;

Words Candidates(const Words& words) { return Complete(CommandTree(), words); }

bool Has(const Words& list, const std::string& word) {
  for (const std::string& w : list) {
    if (w == word) return true;
  }
  return false;
}

TEST_CASE("subcommands, and certs' sub-subcommands") {
  CHECK(Candidates({"ex"}) == Words{"explain"});
  const Words all = Candidates({""});
  for (const char* name : {"webhook", "reconciler", "certs", "check", "selftest", "explain",
                           "migrate", "version", "completion", "help"}) {
    CHECK(Has(all, name));
  }
  CHECK_FALSE(Has(all, "__complete"));
  CHECK(Candidates({"certs", ""}) == Words{"generate", "inject-ca", "rotate", "uninstall"});
  CHECK(Candidates({"certs", "r"}) == Words{"rotate"});
  CHECK(Candidates({"help", "cer"}) == Words{"certs"});
  CHECK(Candidates({"help", "certs", "g"}) == Words{"generate"});
  CHECK(Candidates({"help", "--"}).empty());
}

TEST_CASE("the flags of the command reached come from its FlagSet") {
  const Words explain = Candidates({"explain", "--"});
  ExplainSettings s;
  for (const runtime::FlagInfo& f : ExplainFlags(&s).Flags()) CHECK(Has(explain, "--" + f.name));
  CHECK(Has(explain, "--help"));
  CHECK_FALSE(Has(explain, "--tls-cert-file"));
  CHECK(Candidates({"certs", "rotate", "--ren"}) == Words{"--renew-before"});
  CHECK(Candidates({"check", "--rec"}) == Words{"--recursive"});
  // "-": the one-letter aliases too.
  const Words shorts = Candidates({"check", "-"});
  CHECK(Has(shorts, "-f"));
  CHECK(Has(shorts, "-o"));
  CHECK(Has(shorts, "-R"));
  CHECK(Has(shorts, "--filename"));
}

TEST_CASE("values of enum-like flags, in every form") {
  const Words outputs{"text", "json", "yaml"};
  CHECK(Candidates({"explain", "-o", ""}) == outputs);
  CHECK(Candidates({"explain", "--output", "j"}) == Words{"json"});
  CHECK(Candidates({"explain", "--output=y"}) == Words{"--output=yaml"});
  CHECK(Candidates({"explain", "-oj"}) == Words{"-ojson"});
  CHECK(Candidates({"explain", "-o=j"}) == Words{"-o=json"});
  CHECK(Candidates({"check", "-Ro", "ju"}) == Words{"junit"});
  CHECK(Candidates({"check", "--backend", ""}) ==
        Words{"native", "volcano", "kai", "coscheduling"});
  CHECK(Candidates({"webhook", "--log-format", ""}) == Words{"json", "text"});
  CHECK(Candidates({"reconciler", "--log-level", "w"}) == Words{"warn"});
  CHECK(Candidates({"certs", "generate", "--key-type", ""}) == Words{"ecdsa", "rsa"});
  CHECK(Candidates({"migrate", "--plan", ""}) == Words{"in-place", "side-by-side"});
  CHECK(Candidates({"completion", ""}) == Words{"bash", "zsh", "fish"});
}

TEST_CASE("nothing for free-form values") {
  CHECK(Candidates({"explain", "-n", ""}).empty());
  CHECK(Candidates({"explain", "--kubeconfig", "--"}).empty());
  CHECK(Candidates({"check", "-f", ""}).empty());
  CHECK(Candidates({"certs", "generate", "--service", ""}).empty());
  // A value name with upper case is a placeholder, not a list of values.
  CHECK(Candidates({"certs", "generate", "--extra-san", ""}).empty());
}

TEST_CASE("explain's and migrate's argument: deployment/ as a prefix, once") {
  CHECK(Candidates({"explain", ""}) == Words{"deployment/"});
  CHECK(Candidates({"explain", "dep"}) == Words{"deployment/"});
  CHECK(Candidates({"explain", "-n", "ns1", "-o", "json", ""}) == Words{"deployment/"});
  CHECK(Candidates({"explain", "deployment/web"}).empty());
  CHECK(Candidates({"explain", "deployment/web", ""}).empty());
  CHECK(Candidates({"migrate", "d"}) == Words{"deployment/"});
  CHECK(Candidates({"check", ""}).empty());
  // After a boolean flag the next word is an argument, not its value.
  CHECK(Candidates({"migrate", "--apply", ""}) == Words{"deployment/"});
}

TEST_CASE("completion scripts name the program and call __complete") {
  const std::string bash = CompletionScript("bash", "kubectl-wasd");
  CHECK(bash.find("complete -o default -F _kubectl_wasd kubectl-wasd") != std::string::npos);
  CHECK(bash.find("kubectl-wasd __complete") != std::string::npos);
  CHECK(CompletionScript("zsh", "wasd").find("compdef _wasd wasd") != std::string::npos);
  CHECK(CompletionScript("fish", "wasd").find("complete -c wasd -f -a '(_wasd)'") !=
        std::string::npos);
  CHECK(CompletionScript("powershell", "wasd").empty());
}

}  // namespace
}  // namespace wasd::cmd
