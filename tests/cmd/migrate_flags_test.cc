// cmd/migrate_flags.h: `wasd migrate`'s flags read like every other command's.
#include "cmd/migrate_flags.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace wasd::cmd {
namespace {

using Outcome = runtime::FlagSet::Outcome;

Outcome Parse(MigrateSettings* s, const std::vector<std::string>& args,
              std::string* error = nullptr) {
  std::vector<const char*> argv{"migrate"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  runtime::FlagSet f = MigrateFlags(s);
  const Outcome o = f.Parse(static_cast<int>(argv.size()), argv.data());
  if (error != nullptr) *error = f.error();
  return o;
}

TEST_CASE("migrate: defaults are a dry run of the in-place plan as YAML", "[unit][cmd]") {
  MigrateSettings s;
  REQUIRE(Parse(&s, {}) == Outcome::kRun);
  CHECK(s.plan.empty());  // a dry run shows in-place; --apply needs --plan
  CHECK_FALSE(s.apply);
  CHECK_FALSE(s.all);
  CHECK_FALSE(s.all_namespaces);
  CHECK(s.output == "yaml");
  CHECK(s.ns.empty());
  CHECK(s.timeout == std::chrono::minutes(5));
}

TEST_CASE("migrate: every flag and alias", "[unit][cmd]") {
  MigrateSettings s;
  REQUIRE(Parse(&s, {"-n", "ml", "--all", "--plan", "side-by-side", "--new-name=web2", "--apply",
                     "-o", "json", "--kubeconfig", "k", "--timeout", "90s",
                     "--request-timeout=2s"}) == Outcome::kRun);
  CHECK(s.ns == "ml");
  CHECK(s.all);
  CHECK(s.plan == "side-by-side");
  CHECK(s.new_name == "web2");
  CHECK(s.apply);
  CHECK(s.output == "json");
  CHECK(s.connection.kubeconfig == "k");
  CHECK(s.timeout == std::chrono::seconds(90));
  CHECK(s.connection.request_timeout == std::chrono::seconds(2));
  MigrateSettings t;
  REQUIRE(Parse(&t, {"-A"}) == Outcome::kRun);
  CHECK(t.all_namespaces);
}

TEST_CASE("migrate: mistakes are flag errors", "[unit][cmd]") {
  MigrateSettings s;
  std::string error;
  CHECK(Parse(&s, {"--plan", "blue-green"}, &error) == Outcome::kError);
  CHECK(error.find("blue-green") != std::string::npos);
  CHECK(Parse(&s, {"-o", "text"}) == Outcome::kError);
  CHECK(Parse(&s, {"--timeout=30"}) == Outcome::kError);
  CHECK(Parse(&s, {"--apply=maybe"}) == Outcome::kError);
  const std::string usage = MigrateFlags(&s).Usage();
  CHECK(usage.rfind("Usage: wasd migrate deployment/NAME", 0) == 0);
  CHECK(usage.find("WorkloadWithDeployment") != std::string::npos);
  CHECK(usage.find("Exit status: 0") != std::string::npos);
}

}  // namespace
}  // namespace wasd::cmd
