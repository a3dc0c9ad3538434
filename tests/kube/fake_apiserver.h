// FakeApiServer: starts the test API server (tests/apiserver, `python3 -m
// apiserver`) as a child process for the loopback client tests, and stops it
// by PID in the destructor — also when a test fails. The server also stops
// by itself when this process goes away or after 240 s, so it never lingers.
//
// Of the controllers only the garbage collector runs (it finishes foreground
// deletions); bookmarks are sent only on demand; a create in a missing
// namespace makes the namespace (NamespaceAutoProvision). Its control
// endpoints (/debug/*) and audit records are described in
// tests/apiserver/README.md.
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
  // Contents of dir()/name: e.g. "pki/ca.crt" (the server's CA),
  // "pki/admin.crt"/"pki/admin.key" (a client certificate of user admin),
  // "pki/other-ca.crt" (a CA that signed nothing of this server).
  std::string File(const std::string& name) const;

  // http(s)://127.0.0.1:<port>, the server's CA, bearer token "token-a" (user
  // admin), short timeouts and retries so failures show quickly.
  Config BaseConfig() const;

  // Control (tests/apiserver/README.md).
  void AddFault(const nlohmann::json& rule);  // POST /debug/faults
  // The accepted bearer tokens become exactly these (each for user admin).
  void SetTokens(const std::vector<std::string>& tokens);
  void DropWatches();         // cut every open watch, no final chunk
  void Bookmark();            // one BOOKMARK now on every open watch
  void HoldWatches(bool on);  // new watches get 200, then wait (<= 30 s)
  void Compact();             // older resourceVersions become 410 Expired
  // The audit: one record per request (method, path, query, time,
  // authorization, clientCert, contentType, peerPort, body, …) in order; a
  // watch is recorded when its response starts.
  std::vector<nlohmann::json> Requests();
  // Requests whose path is `path` (in order).
  std::vector<nlohmann::json> RequestsFor(const std::string& method, const std::string& path);

 private:
  nlohmann::json Control(const char* method, const std::string& path, const nlohmann::json& body);
  void WriteTokens(const std::vector<std::string>& tokens);

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
