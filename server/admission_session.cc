#include "server/admission_session.h"

#include <openssl/ssl.h>
#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <utility>

#include "server/admission_session_limits.h"
#include "server/router.h"

namespace wasd::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using namespace session_limits;  // NOLINT(google-build-using-namespace): this session's own bounds

constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

bool IsHttpParseError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

std::string RemoteOf(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const std::string ip = ep.address().to_string();
  return (ep.address().is_v6() ? "[" + ip + "]" : ip) + ":" + std::to_string(ep.port());
}

}  // namespace

AdmissionSession::AdmissionSession(tcp::socket&& socket, std::shared_ptr<net::ssl::context> ssl_ctx,
                                   const SessionEnv& env)
    : ssl_ctx_(std::move(ssl_ctx)),
      stream_(std::move(socket), *ssl_ctx_),
      env_(env),
      drain_timer_(stream_.get_executor()),
      remote_(RemoteOf(beast::get_lowest_layer(stream_).socket())) {
  // Asio sets SSL_MODE_RELEASE_BUFFERS on every SSL: OpenSSL then frees its
  // ~17 KB read and write record buffers after each record and allocates
  // them again for the next, ~13,000 instructions per request of malloc
  // (each large allocation also merges every small chunk freed since).
  // Keeping them holds up to ~34 KB per open connection (+7 KiB of RSS
  // measured after a 9 KB request; tools/bench/RESULTS.md).
  SSL_clear_mode(stream_.native_handle(), SSL_MODE_RELEASE_BUFFERS);
}

AdmissionSession::~AdmissionSession() {
  if (in_flight_) env_.metrics->AddInFlight(-1);
  if (registry_id_ != 0) env_.registry->Remove(registry_id_);
}

void AdmissionSession::OnHandlerException(const char* what) {
  env_.logger->Error("admission connection failed", {{"remote", remote_}, {"error", what}});
  Close();
}

void AdmissionSession::Start() {
  registry_id_ = env_.registry->Add(weak_from_this());
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->phase_ = Phase::kHandshake;
    beast::get_lowest_layer(self->stream_).expires_after(self->env_.config->handshake_timeout);
    self->stream_.async_handshake(net::ssl::stream_base::server,
                                  self->Guarded(&AdmissionSession::OnHandshake));
  });
}

void AdmissionSession::OnHandshake(beast::error_code ec) {
  if (ec) {
    // Plain HTTP on the TLS port, scanners, an untrusted client certificate:
    // routine noise, so only at debug level.
    env_.logger->Debug("tls handshake failed", {{"remote", remote_}, {"error", ec.message()}});
    Close();
    return;
  }
  WaitForRequest();
}

bool AdmissionSession::Draining() const {
  return drain_requested_ || env_.state->draining.load(std::memory_order_relaxed);
}

void AdmissionSession::WaitForRequest() {
  phase_ = Phase::kWaiting;
  if (buffer_.size() > 0) {  // a pipelined request has already begun
    beast::get_lowest_layer(stream_).expires_after(env_.config->read_timeout);
    ReadRequest();
    return;
  }
  std::chrono::milliseconds deadline =
      served_ == 0 ? env_.config->read_timeout : env_.config->idle_timeout;
  if (Draining()) {
    deadline =
        std::min(deadline, served_ > 0 ? kIdleConnectionDrainGrace : kFreshConnectionDrainGrace);
  }
  beast::get_lowest_layer(stream_).expires_after(deadline);
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          Guarded(&AdmissionSession::OnFirstBytes));
}

void AdmissionSession::OnFirstBytes(beast::error_code ec, std::size_t n) {
  if (ec) {  // closed by the client, idle deadline, or drained
    Close();
    return;
  }
  buffer_.commit(n);
  // The first request keeps the deadline set when the connection became
  // ready; later ones get a fresh read deadline from their first byte.
  if (served_ > 0) beast::get_lowest_layer(stream_).expires_after(env_.config->read_timeout);
  ReadRequest();
}

void AdmissionSession::ReadRequest() {
  phase_ = Phase::kReading;
  if (chunked_body_.capacity() > kMaxKeptBodyCapacity) std::string().swap(chunked_body_);
  parser_.emplace(&target_, &chunked_body_);
  parser_->header_limit(kMaxRequestHeaderBytes);
  parser_->body_limit(env_.config->max_request_bytes);
  http::async_read_header(stream_, buffer_, *parser_, Guarded(&AdmissionSession::OnHeader));
}

void AdmissionSession::OnHeader(beast::error_code ec, std::size_t) {
  if (ec) {
    OnReadError(ec);
    return;
  }
  if (parser_->expect_continue() && !parser_->is_done()) {
    net::async_write(stream_, net::buffer(kContinue, sizeof kContinue - 1),
                     Guarded(&AdmissionSession::OnContinueSent));
    return;
  }
  ReadBody();
}

void AdmissionSession::OnContinueSent(beast::error_code ec, std::size_t) {
  if (ec) {
    Close();
    return;
  }
  ReadBody();
}

void AdmissionSession::ReadBody() {
  if (parser_->is_done()) {  // no body
    body_ = {};
    HandleRequest();
    return;
  }
  if (parser_->chunked()) {
    http::async_read(stream_, buffer_, *parser_, Guarded(&AdmissionSession::OnRead));
    return;
  }
  // Content-Length, within the body limit (the parser checked it with the
  // header). The body is read into buffer_ after the header, and stays there.
  body_size_ = static_cast<std::size_t>(*parser_->content_length());
  ReadBodyBytes();
}

void AdmissionSession::ReadBodyBytes() {
  if (buffer_.size() >= body_size_) {
    body_in_buffer_ = body_size_;
    body_ = std::string_view(static_cast<const char*>(buffer_.data().data()), body_size_);
    HandleRequest();
    return;
  }
  stream_.async_read_some(buffer_.prepare(body_size_ - buffer_.size()),
                          Guarded(&AdmissionSession::OnBodyBytes));
}

void AdmissionSession::OnBodyBytes(beast::error_code ec, std::size_t n) {
  if (ec) {  // the client went away or the read deadline passed
    OnReadError(ec);
    return;
  }
  buffer_.commit(n);
  ReadBodyBytes();
}

void AdmissionSession::OnRead(beast::error_code ec, std::size_t) {
  if (ec) {
    OnReadError(ec);
    return;
  }
  body_ = chunked_body_;
  HandleRequest();
}

void AdmissionSession::ConsumeBody() {
  buffer_.consume(body_in_buffer_);
  body_in_buffer_ = 0;
  body_ = {};
  if (buffer_.size() == 0 && buffer_.capacity() > kMaxKeptBodyCapacity) buffer_.shrink_to_fit();
}

void AdmissionSession::OnReadError(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    AdmissionRoute route = RouteAdmission(parser_->method(), target_);
    if (route.kind == RouteKind::kAdmission) {
      env_.metrics->RecordRequest(route.webhook, "", false, 413, std::chrono::nanoseconds(0));
    }
    env_.logger->Warn("request body too large", {{"remote", remote_},
                                                 {"path", PathOf(target_)},
                                                 {"limitBytes", env_.config->max_request_bytes},
                                                 {"code", 413}});
    SendPlain(
        413,
        "request body larger than " + std::to_string(env_.config->max_request_bytes) + " bytes\n",
        true);
    return;
  }
  if (ec == http::error::header_limit) {
    env_.logger->Warn("request header too large", {{"remote", remote_}, {"code", 431}});
    SendPlain(431, "request header larger than 16384 bytes\n", true);
    return;
  }
  if (IsHttpParseError(ec) && ec != http::error::end_of_stream &&
      ec != http::error::partial_message) {
    env_.logger->Info("malformed HTTP request",
                      {{"remote", remote_}, {"error", ec.message()}, {"code", 400}});
    SendPlain(400, "malformed HTTP request: " + ec.message() + "\n", true);
    return;
  }
  // The client went away, or the read deadline passed (a slow or stalled
  // client): nothing sensible can be answered.
  if (ec == beast::error::timeout) {
    env_.logger->Info("request read timed out", {{"remote", remote_}});
  } else {
    env_.logger->Debug("connection ended mid-request",
                       {{"remote", remote_}, {"error", ec.message()}});
  }
  Close();
}

void AdmissionSession::HandleRequest() {
  phase_ = Phase::kProcessing;
  request_start_ = std::chrono::steady_clock::now();
  keep_alive_ = parser_->keep_alive();
  const AdmissionRoute route = RouteAdmission(parser_->method(), target_);
  if (route.kind == RouteKind::kNotFound) {
    SendPlain(404, "404 page not found\n", false);
    return;
  }
  if (route.kind == RouteKind::kMethodNotAllowed) {
    SendPlain(405, "405 method not allowed: admission paths take POST\n", false, "POST");
    return;
  }
  webhook_ = route.webhook;
  in_flight_ = true;
  env_.metrics->AddInFlight(1);
  // Review runs here, on this session's I/O thread. Its work is bounded by
  // the body limit and, for the one user-written text it parses (the
  // wasd.io/scheduling annotation, up to twice per UPDATE), by the limits of
  // workloadbuilder/config_text.h (256 KiB, 64 levels, 10,000 values, YAML
  // pre-scanned): the worst 256 KiB annotations cost at most ~3 MiB above
  // idle and tens of milliseconds (tools/bench/worst_case_memory.py), so reviews
  // need no worker pool of their own.
  // Q23: which hold a native pod gets follows the last discovery (no API
  // call per request: the two Options are built once).
  const admission::Options& options =
      env_.state->native_api_served.load() ? env_.review_options_served : env_.review_options;
  admission::Result result = admission::Review(route.webhook, body_, options);
  if (result.pending) {
    StartLookup(std::move(result));
    return;
  }
  FinishAdmission(result);
}

void AdmissionSession::StartLookup(admission::Result pending) {
  pending_ = std::move(pending);
  ScaleLookupBudget* budget = env_.lookup_budget;
  if (budget != nullptr && !budget->TryAcquire()) {
    env_.metrics->RecordLookupRefused(AdmissionMetrics::LookupRefusal::kBusy);
    admission::Result result = admission::Unavailable(
        pending_, "too many scale reviews are waiting for a Deployment lookup (" +
                      std::to_string(budget->limit()) +
                      ", --max-pending-scale-lookups); not looked up, answered at once");
    pending_ = {};
    FinishAdmission(result, runtime::LogLevel::kWarn);
    return;
  }
  env_.metrics->AddPendingLookups(1);
  const std::chrono::steady_clock::time_point deadline =
      request_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           ParseRequestTimeout(target_).value_or(kDefaultReviewTimeout));
  auto self = shared_from_this();
  auto strand = stream_.get_executor();
  net::post(*env_.lookup_pool, [self, strand, budget, deadline, ns = pending_.scale_namespace,
                                name = pending_.scale_name]() mutable {
    DeploymentLookup lookup;
    // The API server has stopped waiting for this review: no GET for it.
    const bool expired = std::chrono::steady_clock::now() >= deadline;
    if (!expired) {
      try {
        lookup = self->env_.deployments->Get(ns, name);
      } catch (const std::exception& e) {
        lookup = DeploymentLookup::Unreachable(e.what());
      } catch (...) {
        lookup = DeploymentLookup::Unreachable("unknown error");
      }
    }
    if (budget != nullptr) budget->Release();
    self->env_.metrics->AddPendingLookups(-1);
    net::post(strand, [self, expired, lookup = std::move(lookup)]() mutable {
      try {
        self->OnLookup(std::move(lookup), expired);
      } catch (...) {
        self->Close();
      }
    });
  });
}

void AdmissionSession::OnLookup(DeploymentLookup lookup, bool expired) {
  if (expired) {
    env_.metrics->RecordLookupRefused(AdmissionMetrics::LookupRefusal::kExpired);
    admission::Result result = admission::Unavailable(
        pending_, "the review's timeout passed while it waited for a lookup worker; not looked up");
    pending_ = {};
    FinishAdmission(result, runtime::LogLevel::kWarn);
    return;
  }
  if (lookup.outcome == DeploymentLookup::Outcome::kUnreachable) {
    admission::Result result = admission::Unavailable(pending_, lookup.reason);
    pending_ = {};
    FinishAdmission(result, runtime::LogLevel::kWarn);
    return;
  }
  const nlohmann::json* deployment =
      lookup.outcome == DeploymentLookup::Outcome::kFound ? &lookup.deployment : nullptr;
  admission::Result result = admission::FinishScale(*pending_.pending, deployment);
  pending_ = {};
  FinishAdmission(result);
}

void AdmissionSession::FinishAdmission(const admission::Result& result, runtime::LogLevel level) {
  const auto latency = std::chrono::steady_clock::now() - request_start_;
  const admission::Summary& s = result.summary;
  const int code = result.http_status != 200 ? result.http_status : s.code;
  env_.metrics->RecordRequest(webhook_, s.operation, s.allowed, code,
                              std::chrono::duration_cast<std::chrono::nanoseconds>(latency));
  if (!s.denied_rules.empty()) env_.metrics->RecordDenial(s.denied_rules);
  const double latency_ms = std::chrono::duration<double, std::milli>(latency).count();
  if (env_.logger->Enabled(level)) {
    env_.logger->Log(level, "admission",
                     {{"webhook", admission::WebhookName(webhook_)},
                      {"uid", s.uid},
                      {"kind", s.kind},
                      {"namespace", s.namespace_},
                      {"name", s.name},
                      {"operation", s.operation},
                      {"subResource", s.sub_resource},
                      {"allowed", s.allowed},
                      {"code", code},
                      {"patched", s.patched},
                      {"latencyMs", latency_ms},
                      {"hold", s.hold},
                      {"error", s.error}});
  }
  if (!s.out_of_scope.empty() && env_.out_of_scope != nullptr &&
      env_.out_of_scope->First(std::string(admission::WebhookName(webhook_)) + " " +
                               s.out_of_scope)) {
    env_.logger->Log(runtime::LogLevel::kWarn,
                     "admission request for a resource this path does not answer: allowed "
                     "without a patch (check the webhook configuration's rules); logged once",
                     {{"webhook", admission::WebhookName(webhook_)},
                      {"resource", s.out_of_scope},
                      {"uid", s.uid},
                      {"namespace", s.namespace_},
                      {"name", s.name}});
  }
  Send(result.http_status, result.content_type, result.body, false, false, {});
}

}  // namespace wasd::server
