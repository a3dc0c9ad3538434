// The FakeApiServer fixture (named *_test.cc so the test glob builds it into
// kube_test), plus tests that check the fixture itself.
#include "fake_apiserver.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <boost/asio/ssl/context.hpp>

#include "kube/connection.h"
#include "kube/resource.h"

extern char** environ;

namespace wasd::kube::testing {

namespace fs = std::filesystem;

namespace {

// The control requests' own token: kept by SetTokens, so control always works.
constexpr char kControlToken[] = "wasd-test-control";

}  // namespace

FakeApiServer::FakeApiServer(bool plain) : plain_(plain) {
  std::random_device rd;
  dir_ = (fs::temp_directory_path() / ("wasd-fake-apiserver-" + std::to_string(rd()))).string();
  fs::create_directories(dir_);
  // tests/apiserver is the package `apiserver` under tests/ (WASD_TESTDATA is tests/testdata).
  const std::string tests_dir = fs::path(WASD_TESTDATA).parent_path().string();
  std::vector<std::string> args = {"python3",
                                   "-m",
                                   "apiserver",
                                   "--dir",
                                   dir_,
                                   "--token",
                                   "token-a",
                                   "--controllers",
                                   "gc",
                                   "--bookmark-interval",
                                   "0",
                                   "--namespace-auto-provision",
                                   "--max-seconds",
                                   "240",
                                   "--exit-with-parent"};
  if (plain) args.push_back("--plain");
  std::vector<std::string> env = {"PYTHONPATH=" + tests_dir, "PYTHONDONTWRITEBYTECODE=1"};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("PYTHONPATH=", 0) != 0 && entry.rfind("PYTHONDONTWRITEBYTECODE=", 0) != 0) {
      env.push_back(entry);
    }
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string log = dir_ + "/stdout.log";
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    if (std::freopen(log.c_str(), "w", stdout) == nullptr) _exit(126);
    dup2(fileno(stdout), fileno(stderr));
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  // Certificates plus start-up: a second or two normally; 30 s tolerates a
  // loaded CI machine.
  const bool up = Eventually(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          return true;  // died: stop waiting, REQUIRE below fails
        }
        return fs::exists(dir_ + "/ready");
      },
      std::chrono::seconds(30));
  INFO(File("stdout.log"));
  REQUIRE(up);
  REQUIRE(pid_ > 0);
  port_ = nlohmann::json::parse(File("ready")).at("port").get<int>();
  WriteTokens({"token-a"});
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    const bool exited = Eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
                                   std::chrono::seconds(10));
    if (!exited) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string FakeApiServer::File(const std::string& name) const {
  std::ifstream in(dir_ + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Config FakeApiServer::BaseConfig() const {
  Config c;
  c.server = (plain_ ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(port_);
  c.ca_pem = File("pki/ca.crt");
  c.token = "token-a";
  c.timeouts.connect = std::chrono::seconds(5);
  c.timeouts.handshake = std::chrono::seconds(5);
  c.timeouts.request = std::chrono::seconds(10);
  c.retry.max_retries = 3;
  c.retry.backoff.initial = std::chrono::milliseconds(20);
  c.retry.backoff.max = std::chrono::milliseconds(200);
  c.source = "fake apiserver";
  return c;
}

nlohmann::json FakeApiServer::Control(const char* method, const std::string& path,
                                      const nlohmann::json& body) {
  // One request on its own connection (the server's identity is not what
  // these requests test: no verification).
  auto url = ParseServerUrl(BaseConfig().server);
  REQUIRE(url.ok());
  boost::asio::ssl::context tls(boost::asio::ssl::context::tls_client);
  Connection conn(plain_ ? nullptr : &tls);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  const std::stop_token none;
  Status s =
      conn.Connect(url.value(), url.value().host, /*verify=*/false, deadline, deadline, none);
  INFO(method << " " << path << ": " << s.ToString());
  REQUIRE(s.ok());
  http::request<http::string_body> req{http::string_to_verb(method), path, 11};
  req.set(http::field::host, url.value().HostHeader());
  req.set(http::field::authorization, std::string("Bearer ") + kControlToken);
  req.set(http::field::content_type, "application/json");
  req.keep_alive(false);
  if (!body.is_null()) req.body() = body.dump();
  req.prepare_payload();
  s = conn.Write(req, deadline, none);
  REQUIRE(s.ok());
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::uint64_t{64} << 20);
  s = conn.Read(parser, deadline, none);
  REQUIRE(s.ok());
  const auto& res = parser.get();
  INFO(res.body());
  REQUIRE(res.result_int() == 200);
  return nlohmann::json::parse(res.body());
}

void FakeApiServer::WriteTokens(const std::vector<std::string>& tokens) {
  // tokens.csv is read on every request; replaced atomically.
  const std::string tmp = dir_ + "/tokens.csv.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kControlToken << ",admin,admin-uid,\"system:masters\"\n";
    for (const auto& t : tokens) out << t << ",admin,admin-uid,\"system:masters\"\n";
  }
  fs::rename(tmp, dir_ + "/tokens.csv");
}

void FakeApiServer::AddFault(const nlohmann::json& rule) { Control("POST", "/debug/faults", rule); }

void FakeApiServer::SetTokens(const std::vector<std::string>& tokens) { WriteTokens(tokens); }

void FakeApiServer::DropWatches() {
  Control("POST", "/debug/drop-watches", nlohmann::json::object());
}

void FakeApiServer::Bookmark() { Control("POST", "/debug/bookmark", nlohmann::json::object()); }

void FakeApiServer::HoldWatches(bool on) { Control("PUT", "/debug/hold-watches", {{"on", on}}); }

void FakeApiServer::Compact() { Control("POST", "/debug/compact", nlohmann::json::object()); }

std::vector<nlohmann::json> FakeApiServer::Requests() {
  auto items = Control("GET", "/debug/requests", nullptr).at("items");
  return {items.begin(), items.end()};
}

std::vector<nlohmann::json> FakeApiServer::RequestsFor(const std::string& method,
                                                       const std::string& path) {
  std::vector<nlohmann::json> out;
  for (auto& r : Requests()) {
    if (r["method"] == method && r["path"] == path) out.push_back(r);
  }
  return out;
}

bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST_CASE("fake apiserver: starts, authenticates, logs", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  auto r = client.Get(Resource{"v1", "configmaps"}, "ns", "missing");
  CHECK(r.status().not_found());
  auto log = server.RequestsFor("GET", "/api/v1/namespaces/ns/configmaps/missing");
  REQUIRE(log.size() == 1);
  CHECK(log[0]["authorization"] == "Bearer token-a");
}

TEST_CASE("fake apiserver: plain HTTP (kubectl proxy style) works too", "[loopback]") {
  FakeApiServer server(/*plain=*/true);
  Config c = server.BaseConfig();
  REQUIRE(c.server.rfind("http://", 0) == 0);
  Client client(c);
  CHECK(client.Get(Resource{"v1", "configmaps"}, "ns", "missing").status().not_found());
  CHECK(client
            .Create(Resource{"v1", "configmaps"}, "ns",
                    {{"metadata", {{"name", "a"}}}, {"data", {{"k", "v"}}}})
            .ok());
  CHECK(client.Get(Resource{"v1", "configmaps"}, "ns", "a").ok());
}

}  // namespace wasd::kube::testing
