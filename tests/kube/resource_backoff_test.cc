// Pure helpers: resource paths, escaping, server URLs, backoff, Retry-After,
// Status classification.
#include <catch2/catch.hpp>

#include <chrono>

#include "base/status.h"
#include "kube/backoff.h"
#include "kube/resource.h"

namespace wasd::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("resource paths", "[unit][resource]") {
  CHECK(ResourcePath(Deployments(), "ns", "web") == "/apis/apps/v1/namespaces/ns/deployments/web");
  CHECK(ResourcePath(Deployments(), "ns", "") == "/apis/apps/v1/namespaces/ns/deployments");
  CHECK(ResourcePath(Deployments(), "", "") == "/apis/apps/v1/deployments");  // all namespaces
  CHECK(ResourcePath(Pods().Sub("status"), "ns", "p") == "/api/v1/namespaces/ns/pods/p/status");
  CHECK(ResourcePath(Deployments().Sub("scale"), "ns", "web") ==
        "/apis/apps/v1/namespaces/ns/deployments/web/scale");
  CHECK(ResourcePath(ValidatingWebhookConfigurations(), "ignored", "wasd") ==
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wasd");
  CHECK(ResourcePath(Leases(), "kube-system", "l") ==
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
  CHECK(ResourcePath(Pods(), "ns", "a/b c") == "/api/v1/namespaces/ns/pods/a%2Fb%20c");
}

TEST_CASE("query strings escape keys and values", "[unit][resource]") {
  CHECK(QueryString({}).empty());
  CHECK(QueryString({{"labelSelector", "app in (a,b),tier!=db"}, {"limit", "500"}}) ==
        "?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb&limit=500");
  CHECK(QueryString({{"continue", "eyJ2Ijoi+/="}}) == "?continue=eyJ2Ijoi%2B%2F%3D");
  CHECK(PercentEscape("A-z_0.9~") == "A-z_0.9~");
  CHECK(PercentEscape("\xff&") == "%FF%26");
}

TEST_CASE("server URLs", "[unit][resource]") {
  auto u = ParseServerUrl("https://10.0.0.1:6443");
  REQUIRE(u.ok());
  CHECK(u->tls);
  CHECK(u->host == "10.0.0.1");
  CHECK(u->port == "6443");
  CHECK(u->base_path.empty());
  CHECK(u->HostHeader() == "10.0.0.1:6443");

  u = ParseServerUrl("https://api.example.com/prefix/");
  REQUIRE(u.ok());
  CHECK(u->port == "443");
  CHECK(u->base_path == "/prefix");
  CHECK(u->HostHeader() == "api.example.com");

  u = ParseServerUrl("http://[::1]:8001");
  REQUIRE(u.ok());
  CHECK_FALSE(u->tls);
  CHECK(u->host == "::1");
  CHECK(u->HostHeader() == "[::1]:8001");

  u = ParseServerUrl("kube.local:6443");
  REQUIRE(u.ok());
  CHECK(u->tls);
  CHECK(u->host == "kube.local");

  for (const char* bad : {"ftp://x", "https://", "https://u:p@host", "https://h:99999",
                          "https://h:x1", "https://[::1", "https://::1:443", "https://h/?q=1"}) {
    INFO(bad);
    auto r = ParseServerUrl(bad);
    CHECK_FALSE(r.ok());
    CHECK(r.status().kind() == Status::Kind::kInvalidArgument);
  }
}

TEST_CASE("backoff grows, caps and jitters within bounds", "[unit][backoff]") {
  BackoffPolicy p;
  p.initial = milliseconds(100);
  p.max = milliseconds(1000);
  p.factor = 2;
  p.jitter = 0.5;
  CHECK(BackoffDelay(p, 0, 0.0) == milliseconds(100));
  CHECK(BackoffDelay(p, 1, 0.0) == milliseconds(200));
  CHECK(BackoffDelay(p, 3, 0.0) == milliseconds(800));
  CHECK(BackoffDelay(p, 4, 0.0) == milliseconds(1000));          // capped
  CHECK(BackoffDelay(p, 1'000'000, 0.0) == milliseconds(1000));  // no overflow
  CHECK(BackoffDelay(p, 2, 0.5) == milliseconds(300));           // 400 - 400*0.5*0.5
  CHECK(BackoffDelay(p, 2, 0.999) >= milliseconds(200));
  CHECK(BackoffDelay(p, 2, 7.0) == milliseconds(200));  // random clamped to 1
  p.jitter = 0;
  CHECK(BackoffDelay(p, 2, 0.9) == milliseconds(400));
  for (int i = 0; i < 100; ++i) {
    auto d = BackoffDelay(BackoffPolicy{}, i % 20, Random01());
    CHECK(d >= milliseconds(0));
    CHECK(d <= BackoffPolicy{}.max);
  }
}

TEST_CASE("Retry-After: seconds and HTTP dates, clamped", "[unit][backoff]") {
  const auto now =
      std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  CHECK(ParseRetryAfter("3", now, seconds(30)) == seconds(3));
  CHECK(ParseRetryAfter(" 0 ", now, seconds(30)) == seconds(0));
  CHECK(ParseRetryAfter("120", now, seconds(30)) == seconds(30));
  CHECK(ParseRetryAfter("99999999999999", now, seconds(30)) == seconds(30));
  CHECK(ParseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", now, seconds(30)) == seconds(10));
  CHECK(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now, seconds(30)) == seconds(0));
  CHECK(ParseRetryAfter("Mon, 07 Nov 1994 08:49:37 GMT", now, seconds(30)) == seconds(30));
  for (const char* bad : {"", "-1", "1.5", "soon", "Sun, 06 Foo 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT"}) {
    INFO(bad);
    CHECK_FALSE(ParseRetryAfter(bad, now, seconds(30)).has_value());
  }
}

TEST_CASE("Status classification", "[unit][status]") {
  CHECK(Status().ok());
  CHECK(Status::Http(404, "NotFound", "x").not_found());
  Status conflict = Status::Http(409, "Conflict", "modified");
  CHECK(conflict.conflict());
  CHECK_FALSE(conflict.already_exists());
  CHECK(Status::Http(409, "AlreadyExists", "").already_exists());
  CHECK(Status::Http(410, "Gone", "").gone());
  CHECK(Status::Http(500, "Expired", "").gone());  // reason alone also means relist
  CHECK(Status::Http(429, "TooManyRequests", "", seconds(2)).retry_after() == seconds(2));
  CHECK(Status::Http(503, "", "").server_error());
  CHECK_FALSE(Status::Http(404, "", "").unreachable());
  CHECK(Status::Error(Status::Kind::kTimeout, "read").unreachable());
  CHECK(Status::Error(Status::Kind::kTimeout, "read").timed_out());
  CHECK(Status::Error(Status::Kind::kTlsVerify, "x").unreachable());
  CHECK_FALSE(Status::Error(Status::Kind::kBadResponse, "x").unreachable());
  CHECK(Status::Http(404, "NotFound", "deployments.apps \"x\" not found").ToString() ==
        "404 NotFound: deployments.apps \"x\" not found");
  CHECK(Status::Error(Status::Kind::kUnreachable, "connect 1.2.3.4:443: refused").ToString() ==
        "unreachable: connect 1.2.3.4:443: refused");
  Status from =
      Status::FromStatusObject({{"code", 410}, {"reason", "Expired"}, {"message", "old"}});
  CHECK(from.gone());
  CHECK(from.message() == "old");
  CHECK(Status::FromStatusObject(nlohmann::json::object(), 0).http_code() == 500);
}

}  // namespace
}  // namespace wasd::kube
