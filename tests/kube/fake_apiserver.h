// FakeApiServer: starts tests/kube/fake_apiserver.py (loopback HTTPS, its own
// throw-away CA) as a child process for the loopback client tests, and stops
// it by PID in the destructor — also when a test fails.
//
// Not thread-safe; one per test case.
#ifndef WASD_TESTS_KUBE_FAKE_APISERVER_H_
#define WASD_TESTS_KUBE_FAKE_APISERVER_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/client.h"

namespace wasd::kube::testing {

class FakeApiServer {
 public:
  // REQUIREs that the server came up within 30 s. `plain`: HTTP, no TLS.
  explicit FakeApiServer(bool plain = false);
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  const std::string& dir() const { return dir_; }
  int port() const { return port_; }
  std::string File(const std::string& name) const;  // contents of dir()/name

  // https://127.0.0.1:<port>, the fake's CA, bearer token "token-a",
  // short timeouts and retries so failures show quickly.
  Config BaseConfig() const;

  // Control commands and the request log (see fake_apiserver.py).
  void Command(const nlohmann::json& command);
  std::vector<nlohmann::json> Requests();
  // Requests whose path is `path` (in order).
  std::vector<nlohmann::json> RequestsFor(const std::string& method, const std::string& path);

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  bool plain_ = false;
};

// Polls `done` every 20 ms until it holds or `limit` passes; returns done().
bool Eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(15));

}  // namespace wasd::kube::testing

#endif  // WASD_TESTS_KUBE_FAKE_APISERVER_H_
