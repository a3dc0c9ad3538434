// Routing for the two kinds of HTTP endpoints the webhook serves: the
// admission paths on the TLS port, and the probe/metrics paths on the plain
// HTTP ports. Pure functions of (method, target); the query string is
// ignored (the API server appends ?timeout=10s). Thread-safe.
#ifndef WASD_SERVER_ROUTER_H_
#define WASD_SERVER_ROUTER_H_

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/verb.hpp>
#include <string_view>

#include "admission/review.h"

namespace wasd::server {

enum class RouteKind {
  kAdmission,         // an admission path with POST: `webhook` says which
  kNotFound,          // 404
  kMethodNotAllowed,  // 405: known path, wrong method
};

struct AdmissionRoute {
  RouteKind kind = RouteKind::kNotFound;
  admission::Webhook webhook = admission::Webhook::kValidateDeployment;
};

// Routes a request on the admission port.
AdmissionRoute RouteAdmission(boost::beast::http::verb method, std::string_view target);

enum class PlainPath { kHealthz, kReadyz, kMetrics, kNotFound, kMethodNotAllowed };

// Routes a request on a probe/metrics port. GET and HEAD are allowed.
// `serve_probes` / `serve_metrics` say which paths this port serves; the
// others are 404.
PlainPath RoutePlain(boost::beast::http::verb method, std::string_view target, bool serve_probes,
                     bool serve_metrics);

// Beast (Boost 1.74) has its own string_view; these convert without copying.
inline std::string_view ToStd(boost::beast::string_view s) { return {s.data(), s.size()}; }
inline boost::beast::string_view ToBeast(std::string_view s) { return {s.data(), s.size()}; }

// `target` without its query string.
std::string_view PathOf(std::string_view target);

}  // namespace wasd::server

#endif  // WASD_SERVER_ROUTER_H_
