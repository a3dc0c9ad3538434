#include "server/router.h"

namespace wasd::server {

namespace http = boost::beast::http;

std::string_view PathOf(std::string_view target) {
  const std::size_t q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

AdmissionRoute RouteAdmission(http::verb method, std::string_view target) {
  AdmissionRoute route;
  if (!admission::WebhookForPath(PathOf(target), &route.webhook)) {
    route.kind = RouteKind::kNotFound;
    return route;
  }
  route.kind = method == http::verb::post ? RouteKind::kAdmission : RouteKind::kMethodNotAllowed;
  return route;
}

PlainPath RoutePlain(http::verb method, std::string_view target, bool serve_probes,
                     bool serve_metrics) {
  const std::string_view path = PathOf(target);
  PlainPath p = PlainPath::kNotFound;
  if (serve_probes && path == "/healthz") p = PlainPath::kHealthz;
  if (serve_probes && path == "/readyz") p = PlainPath::kReadyz;
  if (serve_metrics && path == "/metrics") p = PlainPath::kMetrics;
  if (p != PlainPath::kNotFound && method != http::verb::get && method != http::verb::head) {
    return PlainPath::kMethodNotAllowed;
  }
  return p;
}

}  // namespace wasd::server
