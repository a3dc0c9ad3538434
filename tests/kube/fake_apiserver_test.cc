// The FakeApiServer fixture (named *_test.cc so the test glob builds it into
// kube_test), plus one test that checks the fixture itself.
#include "fake_apiserver.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace wasd::kube::testing {

namespace fs = std::filesystem;

namespace {

const Resource kCommands{"debug/v1", "commands", false};
const Resource kRequests{"debug/v1", "requests", false};

}  // namespace

FakeApiServer::FakeApiServer(bool plain) : plain_(plain) {
  std::random_device rd;
  dir_ = (fs::temp_directory_path() / ("wasd-fake-apiserver-" + std::to_string(rd()))).string();
  fs::create_directories(dir_);
  const std::string script = std::string(WASD_TESTDATA) + "/../kube/fake_apiserver.py";
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    execlp("python3", "python3", script.c_str(), "--dir", dir_.c_str(), "--max-seconds", "240",
           plain ? "--plain" : static_cast<char*>(nullptr), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Certificate generation plus start-up: well under a second normally; 30 s
  // tolerates a loaded CI machine.
  const bool up = Eventually(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          return true;  // died: stop waiting, REQUIRE below fails
        }
        return fs::exists(dir_ + "/port");
      },
      std::chrono::seconds(30));
  REQUIRE(up);
  REQUIRE(pid_ > 0);
  port_ = std::stoi(File("port"));
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
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
  c.ca_pem = File("ca.crt");
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

void FakeApiServer::Command(const nlohmann::json& command) {
  Client control(BaseConfig());
  auto r = control.Create(kCommands, "", command);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
}

std::vector<nlohmann::json> FakeApiServer::Requests() {
  Client control(BaseConfig());
  ListOptions lo;
  lo.limit = 0;
  auto r = control.List(kRequests, "", lo);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return r.value().items;
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
  CHECK(client.Create(Resource{"v1", "configmaps"}, "ns",
                      {{"metadata", {{"name", "a"}}}, {"data", {{"k", "v"}}}})
            .ok());
  CHECK(client.Get(Resource{"v1", "configmaps"}, "ns", "a").ok());
}

}  // namespace wasd::kube::testing
