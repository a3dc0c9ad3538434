// Exec credential plugins: the ExecCredential answer (pure), and running a
// fake plugin (a shell script written by the test) — caching until expiry,
// Invalidate after a 401, args/env/KUBERNETES_EXEC_INFO, and the errors a
// user sees when the plugin is missing or fails.
#include "kube/exec_credential.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

namespace wasd::kube {
namespace {

using std::chrono::system_clock;

constexpr const char* kV1 = "client.authentication.k8s.io/v1";

std::string Rfc3339(system_clock::time_point t) {
  const std::time_t secs = system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A temporary directory with a plugin script that counts its runs in
// `runs`, writes its arguments, the env var FAKE_ENV and KUBERNETES_EXEC_INFO
// to `seen`, and prints `answer` (a file the test rewrites).
class FakePlugin {
 public:
  FakePlugin() {
    char tmpl[] = "/tmp/wasd-exec-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    script_ = dir_ + "/plugin.sh";
    std::ofstream(script_) << "#!/bin/sh\n"
                           << "echo run >> '" << dir_ << "/runs'\n"
                           << "printf '%s|%s|%s' \"$*\" \"$FAKE_ENV\" \"$KUBERNETES_EXEC_INFO\" > '"
                           << dir_ << "/seen'\n"
                           << "cat '" << dir_ << "/answer'\n"
                           << "exit $(cat '" << dir_ << "/exit' 2>/dev/null || echo 0)\n";
    chmod(script_.c_str(), 0755);
  }
  ~FakePlugin() { std::system(("rm -rf '" + dir_ + "'").c_str()); }  // NOLINT: test cleanup
  FakePlugin(const FakePlugin&) = delete;
  FakePlugin& operator=(const FakePlugin&) = delete;

  void Answer(const std::string& token, const std::string& expiry = "") {
    std::ofstream(dir_ + "/answer")
        << R"({"apiVersion":")" << kV1 << R"(","kind":"ExecCredential","status":{"token":")"
        << token << '"' << (expiry.empty() ? "" : R"(,"expirationTimestamp":")" + expiry + '"')
        << "}}";
  }
  void Exit(int code) { std::ofstream(dir_ + "/exit") << code; }
  std::string Seen() const { return Read(dir_ + "/seen"); }

  ExecConfig Config() const {
    ExecConfig c;
    c.api_version = kV1;
    c.command = script_;
    c.args = {"get-token", "--cluster", "prod"};
    c.env = {{"FAKE_ENV", "from-kubeconfig"}};
    c.interactive_mode = "Never";
    c.install_hint = "install the fake plugin";
    return c;
  }

 private:
  static std::string Read(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  std::string dir_;
  std::string script_;
};

TEST_CASE("ExecCredential answers are checked like client-go does", "[unit][config]") {
  Result<ExecCredential> ok = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"token":"abc","expirationTimestamp":"2026-12-02T10:00:00Z"}})",
      kV1);
  REQUIRE(ok.ok());
  CHECK(ok->token == "abc");
  REQUIRE(ok->expiration.has_value());
  CHECK(system_clock::to_time_t(*ok->expiration) == 1796205600);
  Result<ExecCredential> offset = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"token":"abc","expirationTimestamp":"2026-12-02T11:30:00.123+01:30"}})",
      kV1);
  REQUIRE(offset.ok());
  CHECK(system_clock::to_time_t(*offset->expiration) == 1796205600);

  const struct {
    const char* text;
    const char* error;
  } bad[] = {
      {"not json", "not a JSON object"},
      {R"({"kind":"Other"})", "not an ExecCredential"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}})",
       "not the client.authentication.k8s.io/v1 the kubeconfig asks for"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})", "no status"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
       "no status.token"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
           "status":{"clientCertificateData":"x","clientKeyData":"y"}})",
       "accepts only a token"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
           "status":{"token":"t","expirationTimestamp":"tomorrow"}})",
       "is not an RFC 3339 time"},
  };
  for (const auto& b : bad) {
    INFO(b.text);
    Result<ExecCredential> r = ParseExecCredential(b.text, kV1);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(b.error));
  }
}

TEST_CASE("exec plugin: run once, cached until it expires or the server says 401",
          "[unit][config]") {
  FakePlugin plugin;
  plugin.Answer("token-1");
  ExecConfig config = plugin.Config();
  config.provide_cluster_info = true;
  ExecTokenSource source(config, "https://10.0.0.1:6443", "PEM");
  Result<std::string> t = source.Token();
  REQUIRE(t.ok());
  CHECK(*t == "token-1");
  // args, env and the ExecCredential request with the cluster reach the plugin.
  const std::string seen = plugin.Seen();
  CHECK_THAT(seen, Catch::StartsWith("get-token --cluster prod|from-kubeconfig|"));
  CHECK_THAT(seen, Catch::Contains(R"("kind":"ExecCredential")"));
  CHECK_THAT(seen, Catch::Contains(R"("interactive":false)"));
  CHECK_THAT(seen, Catch::Contains(R"("server":"https://10.0.0.1:6443")"));
  CHECK_THAT(seen, Catch::Contains(R"("certificate-authority-data":"UEVN")"));  // base64("PEM")

  plugin.Answer("token-2");
  CHECK(*source.Token() == "token-1");  // no expiry given: cached
  CHECK(source.runs() == 1);
  source.Invalidate();  // the server answered 401
  CHECK(*source.Token() == "token-2");
  CHECK(source.runs() == 2);

  SECTION("a token near its expiry is fetched anew") {
    plugin.Answer("short", Rfc3339(system_clock::now() + std::chrono::seconds(5)));
    source.Invalidate();
    CHECK(*source.Token() == "short");
    plugin.Answer("long", Rfc3339(system_clock::now() + std::chrono::hours(1)));
    CHECK(*source.Token() == "long");  // 5 s left is inside the 10 s margin
    CHECK(*source.Token() == "long");
    CHECK(source.runs() == 4);
  }
}

TEST_CASE("exec plugin: missing or failing plugins say what is wrong", "[unit][config]") {
  FakePlugin plugin;
  ExecConfig missing = plugin.Config();
  missing.command = "wasd-no-such-plugin";
  Result<std::string> r = ExecTokenSource(missing, "https://x", "").Token();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().kind() == Status::Kind::kInvalidArgument);
  CHECK_THAT(r.status().message(), Catch::Contains("cannot run \"wasd-no-such-plugin\""));
  CHECK_THAT(r.status().message(), Catch::Contains("install the fake plugin"));

  plugin.Answer("t");
  plugin.Exit(3);
  r = ExecTokenSource(plugin.Config(), "https://x", "").Token();
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::EndsWith("exited with status 3"));
}

}  // namespace
}  // namespace wasd::kube
