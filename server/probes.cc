#include "server/probes.h"

#include <string>

#include "server/router.h"

namespace wasd::server {

runtime::HttpResponse AnswerPlainRequest(boost::beast::http::verb method, std::string_view target,
                                         bool serve_probes, bool serve_metrics,
                                         const ServerState& state,
                                         const AdmissionMetrics& metrics) {
  runtime::HttpResponse r;
  switch (RoutePlain(method, target, serve_probes, serve_metrics)) {
    case PlainPath::kHealthz: r.body = "ok\n"; return r;
    case PlainPath::kReadyz: {
      if (state.Ready()) {
        r.body = "ok\n";
        return r;
      }
      r.status = 503;
      r.body = "not ready:";
      if (state.draining.load()) r.body += " shutting down;";
      if (!state.accepting.load()) r.body += " admission listener not accepting;";
      if (!state.cert_loaded.load()) r.body += " no serving certificate;";
      if (!state.api_checked.load()) r.body += " scheduling.k8s.io not discovered yet;";
      r.body.back() = '\n';
      return r;
    }
    case PlainPath::kMetrics:
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = metrics.RenderPrometheus();
      return r;
    case PlainPath::kMethodNotAllowed:
      r.status = 405;
      r.body = "405 method not allowed\n";
      r.allow = "GET, HEAD";
      return r;
    case PlainPath::kNotFound: break;
  }
  r.status = 404;
  r.body = "404 page not found\n";
  return r;
}

}  // namespace wasd::server
