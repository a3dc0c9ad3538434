// The answers of the plain-HTTP endpoints: /healthz (200 while the process
// runs), /readyz (200 only while the TLS listener accepts, a certificate is
// loaded and the server is not draining; 503 otherwise, saying which) and
// /metrics (Prometheus text). Pure over the state it is given; thread-safe.
#ifndef WASD_SERVER_PROBES_H_
#define WASD_SERVER_PROBES_H_

#include <boost/beast/http/verb.hpp>
#include <string_view>

#include "runtime/http_server.h"
#include "server/admission_metrics.h"
#include "server/server_state.h"

namespace wasd::server {

// Answers one request on a port that serves the probes, the metrics, or
// both (when the two addresses are the same).
runtime::HttpResponse AnswerPlainRequest(boost::beast::http::verb method, std::string_view target,
                                         bool serve_probes, bool serve_metrics,
                                         const ServerState& state, const AdmissionMetrics& metrics);

}  // namespace wasd::server

#endif  // WASD_SERVER_PROBES_H_
