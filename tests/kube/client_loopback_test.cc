// Client against the loopback fake API server: CRUD, paging, typed errors,
// retries, token rotation, client certificates, TLS verification.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <thread>

#include "fake_apiserver.h"
#include "kube/client.h"

namespace wasd::kube {
namespace {

using testing::FakeApiServer;

const Resource kConfigMaps{"v1", "configmaps"};

nlohmann::json ConfigMap(const std::string& name, const std::string& value = "1") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
          {"data", {{"k", value}}}};
}

std::string Rv(const nlohmann::json& obj) { return obj["metadata"]["resourceVersion"]; }

TEST_CASE("client: create, get, update with resourceVersion, 404 and 409", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  auto created = client.Create(kConfigMaps, "ns", ConfigMap("a"));
  REQUIRE(created.ok());
  CHECK(created->at("metadata").at("namespace") == "ns");

  auto got = client.Get(kConfigMaps, "ns", "a");
  REQUIRE(got.ok());
  CHECK(got->at("data").at("k") == "1");

  auto missing = client.Get(kConfigMaps, "ns", "nope");
  CHECK(missing.status().not_found());
  CHECK(missing.status().reason() == "NotFound");
  CHECK_FALSE(missing.status().unreachable());

  auto again = client.Create(kConfigMaps, "ns", ConfigMap("a"));
  CHECK(again.status().already_exists());

  nlohmann::json updated = got.value();
  updated["data"]["k"] = "2";
  auto ok = client.Update(kConfigMaps, "ns", "a", updated);
  REQUIRE(ok.ok());
  CHECK(ok->at("data").at("k") == "2");

  // The same (now stale) resourceVersion again: 409 Conflict, not retried.
  auto stale = client.Update(kConfigMaps, "ns", "a", updated);
  CHECK(stale.status().conflict());
  CHECK_FALSE(stale.status().already_exists());
  CHECK(stale.status().reason() == "Conflict");
  CHECK_THAT(stale.status().message(), Catch::Contains("the object has been modified"));
  CHECK(server.RequestsFor("PUT", "/api/v1/namespaces/ns/configmaps/a").size() == 2);
}

TEST_CASE("client: patch kinds are sent with their content types", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap("p")).ok());
  auto merged = client.Patch(kConfigMaps, "ns", "p", PatchType::kMerge, {{"data", {{"m", "x"}}}});
  REQUIRE(merged.ok());
  CHECK(merged->at("data").at("m") == "x");
  CHECK(merged->at("data").at("k") == "1");
  auto json_patched = client.Patch(
      kConfigMaps, "ns", "p", PatchType::kJson,
      nlohmann::json::array({{{"op", "replace"}, {"path", "/data/k"}, {"value", "j"}}}));
  REQUIRE(json_patched.ok());
  CHECK(json_patched->at("data").at("k") == "j");
  PatchOptions po;
  po.field_manager = "wasd";
  REQUIRE(
      client.Patch(kConfigMaps, "ns", "p", PatchType::kStrategicMerge, {{"data", {{"s", "y"}}}}, po)
          .ok());

  auto log = server.RequestsFor("PATCH", "/api/v1/namespaces/ns/configmaps/p");
  REQUIRE(log.size() == 3);
  CHECK(log[0]["contentType"] == "application/merge-patch+json");
  CHECK(log[1]["contentType"] == "application/json-patch+json");
  CHECK(log[2]["contentType"] == "application/strategic-merge-patch+json");
  CHECK(log[2]["query"]["fieldManager"] == "wasd");

  // Shape errors are caught before sending.
  CHECK(client.Patch(kConfigMaps, "ns", "p", PatchType::kJson, {{"a", 1}}).status().kind() ==
        Status::Kind::kInvalidArgument);
  CHECK(client.Patch(kConfigMaps, "ns", "p", PatchType::kApply, {{"a", 1}}).status().kind() ==
        Status::Kind::kInvalidArgument);
}

TEST_CASE("client: delete with preconditions and propagation policy", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  auto created = client.Create(kConfigMaps, "ns", ConfigMap("d"));
  REQUIRE(created.ok());
  DeleteOptions wrong;
  wrong.precondition_resource_version = "1";
  CHECK(client.Delete(kConfigMaps, "ns", "d", wrong).status().conflict());
  const std::string uid = created->at("metadata").at("uid");  // the server's, not the one sent
  DeleteOptions right;
  right.precondition_uid = uid;
  right.precondition_resource_version = Rv(created.value());
  right.propagation_policy = "Foreground";
  REQUIRE(client.Delete(kConfigMaps, "ns", "d", right).ok());
  // Foreground: the server keeps the object (deletionTimestamp, finalizer
  // foregroundDeletion) until its garbage collector, finding no dependents,
  // removes it.
  CHECK(
      testing::Eventually([&] { return client.Get(kConfigMaps, "ns", "d").status().not_found(); }));
  auto log = server.RequestsFor("DELETE", "/api/v1/namespaces/ns/configmaps/d");
  REQUIRE(log.size() == 2);
  const auto& body = log[1]["body"];  // the audit keeps the JSON body decoded
  CHECK(body["propagationPolicy"] == "Foreground");
  CHECK(body["preconditions"]["uid"] == uid);
  CHECK(body["kind"] == "DeleteOptions");
}

TEST_CASE("client: LIST follows continue tokens", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  for (const char* n : {"a", "b", "c", "d", "e"})
    REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap(n)).ok());
  REQUIRE(client.Create(kConfigMaps, "other", ConfigMap("z")).ok());
  ListOptions lo;
  lo.limit = 2;
  auto all = client.List(kConfigMaps, "ns", lo);
  REQUIRE(all.ok());
  std::vector<std::string> names;
  for (const auto& item : all->items) names.push_back(item["metadata"]["name"]);
  CHECK(names == std::vector<std::string>{"a", "b", "c", "d", "e"});
  CHECK_FALSE(all->resource_version.empty());
  CHECK(all->continue_token.empty());
  auto log = server.RequestsFor("GET", "/api/v1/namespaces/ns/configmaps");
  REQUIRE(log.size() == 3);
  CHECK(log[0]["query"]["limit"] == "2");
  CHECK_FALSE(log[0]["query"].contains("continue"));
  // The tokens are the server's (opaque): each page resumes where the last ended.
  const std::string second = log[1]["query"].value("continue", "");
  const std::string third = log[2]["query"].value("continue", "");
  CHECK_FALSE(second.empty());
  CHECK_FALSE(third.empty());
  CHECK(second != third);

  auto page = client.ListPage(kConfigMaps, "ns", lo);
  REQUIRE(page.ok());
  CHECK(page->items.size() == 2);
  CHECK(page->continue_token == second);  // the same first page, the same token
}

TEST_CASE("client: the rate limit takes a token per request; none due in time is an error",
          "[loopback][ratelimit]") {
  FakeApiServer server;
  Config c = server.BaseConfig();
  c.rate_limit = {0.01, 2};  // two at once, then one every 100 s
  Client client(c);
  REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap("q")).ok());
  REQUIRE(client.Get(kConfigMaps, "ns", "q").ok());
  // The third request's token is due in 100 s, past its 2 s timeout: it fails
  // at once, unsent, and says why.
  RequestOptions ro;
  ro.timeout = std::chrono::seconds(2);
  auto got = client.Get(kConfigMaps, "ns", "q", ro);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().kind() == Status::Kind::kTimeout);
  CHECK_THAT(got.status().message(), Catch::Contains("client rate limit (0.01 requests/s)"));
  CHECK(server.RequestsFor("GET", "/api/v1/namespaces/ns/configmaps/q").size() == 1);
  // A watch takes a token too.
  WatchOptions wo;
  wo.timeout_seconds = 1;
  const Status watched =
      client.Watch(kConfigMaps, "ns", wo, [](const WatchEvent&) { return true; });
  CHECK(watched.kind() == Status::Kind::kTimeout);
  // qps 0: no limit.
  Config unlimited = server.BaseConfig();
  unlimited.rate_limit = {0, 1};
  Client free_client(unlimited);
  for (int i = 0; i < 5; ++i) REQUIRE(free_client.Get(kConfigMaps, "ns", "q", ro).ok());
}

TEST_CASE("client: 429 is retried after Retry-After, a bounded number of times", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap("r")).ok());
  const std::string path = "/api/v1/namespaces/ns/configmaps/r";

  SECTION("one 429, then success after the delay") {
    server.AddFault({{"code", 429}, {"path", "^" + path + "$"}, {"count", 1}, {"retryAfter", 1}});
    auto got = client.Get(kConfigMaps, "ns", "r");
    REQUIRE(got.ok());
    auto log = server.RequestsFor("GET", path);
    REQUIRE(log.size() == 2);
    // Retry-After: 1 — the retry is not sent before a second has passed
    // (a lower bound on behaviour, not a performance assertion).
    CHECK(log[1]["time"].get<double>() - log[0]["time"].get<double>() >= 0.95);
  }
  SECTION("always 429: gives up after max_retries with the 429") {
    Config c = server.BaseConfig();
    c.retry.max_retries = 2;
    Client limited(c);
    server.AddFault({{"code", 429}, {"path", "^" + path + "$"}, {"count", 100}, {"retryAfter", 0}});
    auto got = limited.Get(kConfigMaps, "ns", "r");
    CHECK(got.status().too_many_requests());
    CHECK(got.status().reason() == "TooManyRequests");
    CHECK(server.RequestsFor("GET", path).size() == 3);
  }
  SECTION("a Retry-After beyond the call's timeout is returned, not waited for") {
    server.AddFault({{"code", 429}, {"path", "^" + path + "$"}, {"count", 1}, {"retryAfter", 20}});
    RequestOptions ro;
    ro.timeout = std::chrono::seconds(2);
    auto got = client.Get(kConfigMaps, "ns", "r", ro);
    CHECK(got.status().too_many_requests());
    CHECK(got.status().retry_after() == std::chrono::seconds(20));
    CHECK(server.RequestsFor("GET", path).size() == 1);
  }
  SECTION("429 on a write is retried too (the server did not process it)") {
    server.AddFault({{"code", 429}, {"path", "^" + path + "$"}, {"count", 1}, {"retryAfter", 0}});
    auto patched =
        client.Patch(kConfigMaps, "ns", "r", PatchType::kMerge, {{"data", {{"k", "9"}}}});
    REQUIRE(patched.ok());
    CHECK(server.RequestsFor("PATCH", path).size() == 2);
  }
}

TEST_CASE("client: 5xx is returned as server_error; retried only for GET with Retry-After",
          "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap("s")).ok());
  const std::string path = "/api/v1/namespaces/ns/configmaps/s";
  server.AddFault({{"code", 500}, {"path", "^" + path + "$"}, {"count", 1}});
  auto failed = client.Get(kConfigMaps, "ns", "s");
  CHECK(failed.status().server_error());
  CHECK(failed.status().http_code() == 500);
  CHECK(server.RequestsFor("GET", path).size() == 1);

  server.AddFault({{"code", 503},
                   {"reason", "ServiceUnavailable"},
                   {"path", "^" + path + "$"},
                   {"count", 1},
                   {"retryAfter", 0}});
  CHECK(client.Get(kConfigMaps, "ns", "s").ok());
  CHECK(server.RequestsFor("GET", path).size() == 3);

  server.AddFault({{"code", 503},
                   {"reason", "ServiceUnavailable"},
                   {"path", "^" + path + "$"},
                   {"count", 1},
                   {"retryAfter", 0}});
  CHECK(client.Patch(kConfigMaps, "ns", "s", PatchType::kMerge, {{"data", {{"k", "2"}}}})
            .status()
            .server_error());
  CHECK(server.RequestsFor("PATCH", path).size() == 1);
}

TEST_CASE("client: the token file is re-read so a rotated token is used", "[loopback]") {
  FakeApiServer server;
  const std::string token_file = server.dir() + "/rotating-token";
  std::ofstream(token_file) << "token-old\n";
  server.SetTokens({"token-new"});
  Config c = server.BaseConfig();
  c.token = "token-old";
  c.token_file = token_file;
  Client client(c);
  auto denied = client.Get(kConfigMaps, "ns", "x");
  CHECK(denied.status().http_code() == 401);
  CHECK(denied.status().reason() == "Unauthorized");

  std::ofstream(token_file, std::ios::trunc) << "token-new\n";
  auto allowed = client.Get(kConfigMaps, "ns", "x");
  CHECK(allowed.status().not_found());  // authenticated; the object just does not exist
  auto log = server.RequestsFor("GET", "/api/v1/namespaces/ns/configmaps/x");
  REQUIRE(log.size() == 2);
  CHECK(log[0]["authorization"] == "Bearer token-old");
  CHECK(log[1]["authorization"] == "Bearer token-new");

  // A vanished token file keeps the last good token.
  std::remove(token_file.c_str());
  CHECK(client.Get(kConfigMaps, "ns", "x").status().not_found());
}

TEST_CASE("client: client certificate authentication", "[loopback]") {
  FakeApiServer server;
  Config c = server.BaseConfig();
  c.token.clear();
  Client anonymous(c);
  CHECK(anonymous.Get(kConfigMaps, "ns", "x").status().http_code() == 401);

  c.client_cert_pem = server.File("pki/admin.crt");  // CN=admin
  c.client_key_pem = server.File("pki/admin.key");
  Client with_cert(c);
  CHECK(with_cert.Get(kConfigMaps, "ns", "x").status().not_found());
  auto log = server.RequestsFor("GET", "/api/v1/namespaces/ns/configmaps/x");
  REQUIRE(log.size() == 2);
  CHECK(log[0]["clientCert"] == "");
  CHECK(log[1]["clientCert"] == "admin");
  CHECK(log[1]["authorization"] == "");

  c.client_key_pem = "not a key";
  Client broken(c);
  auto r = broken.Get(kConfigMaps, "ns", "x");
  CHECK(r.status().kind() == Status::Kind::kInvalidArgument);
  CHECK_THAT(r.status().message(), Catch::Contains("TLS setup"));
}

TEST_CASE("client: server certificate verification", "[loopback]") {
  FakeApiServer server;
  SECTION("an unrelated CA fails with a clear TLS error") {
    Config c = server.BaseConfig();
    c.ca_pem = server.File("pki/other-ca.crt");
    Client client(c);
    auto r = client.Get(kConfigMaps, "ns", "x");
    CHECK(r.status().kind() == Status::Kind::kTlsVerify);
    CHECK(r.status().unreachable());
    CHECK_THAT(r.status().message(),
               Catch::Contains("did not verify") &&
                   Catch::Contains("127.0.0.1:" + std::to_string(server.port())) &&
                   Catch::Contains("certificate"));
    CHECK(server.Requests().empty());  // nothing was sent
  }
  SECTION("the right CA but the wrong name fails") {
    Config c = server.BaseConfig();
    c.tls_server_name = "api.example.com";
    auto r = Client(c).Get(kConfigMaps, "ns", "x");
    CHECK(r.status().kind() == Status::Kind::kTlsVerify);
    CHECK_THAT(r.status().message(),
               Catch::Contains("api.example.com") && Catch::Contains("mismatch"));
  }
  SECTION("a name in the certificate's SANs works") {
    Config c = server.BaseConfig();
    c.tls_server_name = "localhost";
    CHECK(Client(c).Get(kConfigMaps, "ns", "x").status().not_found());
  }
  SECTION("insecure-skip-tls-verify accepts any certificate") {
    Config c = server.BaseConfig();
    c.ca_pem.clear();
    c.insecure_skip_tls_verify = true;
    CHECK(Client(c).Get(kConfigMaps, "ns", "x").status().not_found());
  }
}

TEST_CASE("client: unreachable and timed-out servers", "[loopback]") {
  // A listening socket that never accepts: TCP connects (the kernel
  // completes it from the backlog) but no TLS handshake answer ever comes.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(fd, 8) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const int silent_port = ntohs(addr.sin_port);

  Config c;
  c.retry.max_retries = 1;
  c.retry.backoff.initial = std::chrono::milliseconds(10);
  c.timeouts.handshake = std::chrono::milliseconds(300);
  SECTION("handshake deadline") {
    c.server = "https://127.0.0.1:" + std::to_string(silent_port);
    auto r = Client(c).Get(Deployments(), "ns", "web");
    CHECK(r.status().timed_out());
    CHECK(r.status().unreachable());
    CHECK_THAT(r.status().message(), Catch::Contains("TLS handshake"));
  }
  close(fd);
  SECTION("connection refused") {
    // The port was just closed: nothing listens there now.
    c.server = "https://127.0.0.1:" + std::to_string(silent_port);
    auto r = Client(c).Get(Deployments(), "ns", "web");
    CHECK(r.status().kind() == Status::Kind::kUnreachable);
    CHECK_THAT(r.status().message(),
               Catch::Contains("connect 127.0.0.1:" + std::to_string(silent_port)));
  }
  SECTION("bad server URL") {
    c.server = "ftp://x";
    auto r = Client(c).Get(Deployments(), "ns", "web");
    CHECK(r.status().kind() == Status::Kind::kInvalidArgument);
  }
}

TEST_CASE("client: keep-alive connections are reused", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  for (int i = 0; i < 5; ++i) CHECK(client.Get(kConfigMaps, "ns", "x").status().not_found());
  auto log = server.RequestsFor("GET", "/api/v1/namespaces/ns/configmaps/x");
  REQUIRE(log.size() == 5);
  // Sequential calls share one connection: the same client port every time.
  for (const auto& entry : log) CHECK(entry["peerPort"] == log[0]["peerPort"]);
}

}  // namespace
}  // namespace wasd::kube

namespace wasd::kube {
namespace {

TEST_CASE("client: responses and watch lines over the limits are refused", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  const std::string big(2000, 'x');
  REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap("big", big)).ok());
  Config c = server.BaseConfig();
  c.limits.max_response_bytes = 1000;
  c.limits.max_watch_line_bytes = 1000;
  Client limited(c);
  auto listed = limited.List(kConfigMaps, "ns");
  CHECK(listed.status().kind() == Status::Kind::kBadResponse);
  CHECK_THAT(listed.status().message(), Catch::Contains("limit 1000"));
  // A small answer on the same client still works.
  CHECK(limited.Get(kConfigMaps, "ns", "small").status().not_found());

  WatchOptions wo;
  wo.resource_version = "1";
  int seen = 0;
  Status s = limited.Watch(kConfigMaps, "ns", wo, [&](const WatchEvent&) { return ++seen > 0; });
  CHECK(s.kind() == Status::Kind::kBadResponse);
  CHECK_THAT(s.message(), Catch::Contains("exceeds 1000 bytes"));
  CHECK(seen == 0);
}

TEST_CASE("client: concurrent calls from many threads", "[loopback]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "ns", ConfigMap("shared")).ok());
  std::atomic<int> ok{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 10; ++i) {
          if (client.Get(kConfigMaps, "ns", "shared").ok()) ++ok;
          nlohmann::json cm = ConfigMap("t" + std::to_string(t) + "-" + std::to_string(i));
          if (client.Create(kConfigMaps, "ns", cm).ok()) ++ok;
        }
      });
    }
  }
  CHECK(ok == 120);
  auto all = client.List(kConfigMaps, "ns");
  REQUIRE(all.ok());
  CHECK(all->items.size() == 61);
}

}  // namespace
}  // namespace wasd::kube
