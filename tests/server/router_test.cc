#include "server/router.h"

#include <catch2/catch.hpp>

#include "server/probes.h"

namespace wasd::server {
namespace {

using admission::Webhook;
using boost::beast::http::verb;

TEST_CASE("admission paths route to their webhook, query ignored", "[unit][server]") {
  AdmissionRoute r = RouteAdmission(verb::post, "/validate-apps-v1-deployment?timeout=10s");
  CHECK(r.kind == RouteKind::kAdmission);
  CHECK(r.webhook == Webhook::kValidateDeployment);
  r = RouteAdmission(verb::post, "/mutate-apps-v1-deployment");
  CHECK(r.kind == RouteKind::kAdmission);
  CHECK(r.webhook == Webhook::kMutateDeployment);
  r = RouteAdmission(verb::post, "/mutate-v1-pod?timeout=30s");
  CHECK(r.kind == RouteKind::kAdmission);
  CHECK(r.webhook == Webhook::kMutatePod);
}

TEST_CASE("wrong method on an admission path is 405, unknown path 404", "[unit][server]") {
  CHECK(RouteAdmission(verb::get, "/mutate-v1-pod").kind == RouteKind::kMethodNotAllowed);
  CHECK(RouteAdmission(verb::put, "/validate-apps-v1-deployment").kind ==
        RouteKind::kMethodNotAllowed);
  CHECK(RouteAdmission(verb::post, "/").kind == RouteKind::kNotFound);
  CHECK(RouteAdmission(verb::post, "/mutate-v1-pod/").kind == RouteKind::kNotFound);
  CHECK(RouteAdmission(verb::post, "/healthz").kind == RouteKind::kNotFound);
  CHECK(RouteAdmission(verb::get, "/nope").kind == RouteKind::kNotFound);
}

TEST_CASE("plain ports serve only their paths", "[unit][server]") {
  CHECK(RoutePlain(verb::get, "/healthz", true, false) == PlainPath::kHealthz);
  CHECK(RoutePlain(verb::head, "/readyz?verbose", true, false) == PlainPath::kReadyz);
  CHECK(RoutePlain(verb::get, "/metrics", true, false) == PlainPath::kNotFound);
  CHECK(RoutePlain(verb::get, "/metrics", false, true) == PlainPath::kMetrics);
  CHECK(RoutePlain(verb::get, "/healthz", false, true) == PlainPath::kNotFound);
  CHECK(RoutePlain(verb::post, "/healthz", true, true) == PlainPath::kMethodNotAllowed);
}

TEST_CASE("readyz follows listener, certificate and draining", "[unit][server]") {
  ServerState state;
  AdmissionMetrics metrics;
  auto ask = [&](std::string_view target) {
    return AnswerPlainRequest(verb::get, target, true, true, state, metrics);
  };
  CHECK(ask("/healthz").status == 200);
  runtime::HttpResponse r = ask("/readyz");
  CHECK(r.status == 503);
  CHECK(r.body ==
        "not ready: admission listener not accepting; no serving certificate; scheduling.k8s.io "
        "not discovered yet\n");

  state.cert_loaded = true;
  state.accepting = true;
  r = ask("/readyz");
  // Q23: not before the first discovery answer (served, not, or failed).
  CHECK(r.status == 503);
  CHECK(r.body == "not ready: scheduling.k8s.io not discovered yet\n");
  state.api_checked = true;
  r = ask("/readyz");
  CHECK(r.status == 200);
  CHECK(r.body == "ok\n");

  state.draining = true;
  r = ask("/readyz");
  CHECK(r.status == 503);
  CHECK(r.body.find("shutting down") != std::string::npos);
  CHECK(ask("/healthz").status == 200);  // liveness is unaffected by draining

  r = ask("/metrics");
  CHECK(r.status == 200);
  CHECK(r.content_type.rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(r.body.find("wasd_admission_in_flight_requests 0\n") != std::string::npos);

  CHECK(ask("/other").status == 404);
  r = AnswerPlainRequest(verb::delete_, "/readyz", true, true, state, metrics);
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, HEAD");
}

}  // namespace
}  // namespace wasd::server
