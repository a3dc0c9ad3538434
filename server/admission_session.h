// AdmissionSession: one TLS connection on the admission port, from the
// handshake to the close, following Beast's advanced-server pattern: the
// session owns its stream and buffers, runs every handler on its own strand,
// and sets a deadline before each handshake, read and write.
//
// Per request: wait for the first byte (idle keep-alive deadline; the read
// deadline for the first request), read headers and body under one read
// deadline with explicit header and body limits, route, call
// admission::Review on the body where it was read (a Content-Length body
// stays in the read buffer: no copy), write the answer, header and body in
// one buffer, under the write deadline. A deployments/scale review is finished off the I/O
// threads: the Deployment is fetched on the lookup pool and the result is
// posted back to this strand; at most --max-pending-scale-lookups wait for
// the pool (beyond: 503 at once), and one whose review deadline (the
// `timeout` query parameter) passed while it waited is answered 503
// without the lookup (server/scale_lookup_budget.h).
//
// Buffers are reused across the requests of a connection: the read buffer,
// the target and chunked-body strings and the response text.
//
// Thread-safety: Start() and Drain() may be called from any thread; all
// other members run on the session's strand only. No exception leaves a
// handler.
#ifndef WASD_SERVER_ADMISSION_SESSION_H_
#define WASD_SERVER_ADMISSION_SESSION_H_

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "admission/review.h"
#include "runtime/log.h"
#include "server/admission_metrics.h"
#include "server/deployment_source.h"
#include "server/once_filter.h"
#include "server/request_parser.h"
#include "server/scale_lookup_budget.h"
#include "server/server_state.h"
#include "server/session_registry.h"
#include "server/webhook_config.h"

namespace wasd::server {

// What every admission session shares. All pointees outlive the sessions.
struct SessionEnv {
  const WebhookConfig* config = nullptr;
  admission::Options review_options;         // the Workload API not known to be served
  admission::Options review_options_served;  // ... served (ServerState::native_api_served)
  AdmissionMetrics* metrics = nullptr;
  const runtime::Logger* logger = nullptr;
  DeploymentSource* deployments = nullptr;
  boost::asio::thread_pool* lookup_pool = nullptr;
  ScaleLookupBudget* lookup_budget = nullptr;  // null: unbounded (tests)
  SessionRegistry* registry = nullptr;
  ServerState* state = nullptr;
  OnceFilter* out_of_scope = nullptr;  // one log line per resource a path does not answer
};

// Largest request header block. The API server sends a few hundred bytes
// (Host, Content-Type, Accept, User-Agent, Content-Length); 16 KiB leaves
// room for proxies and tracing headers while bounding what a client can make
// us buffer before the body limit applies.
inline constexpr std::uint32_t kMaxRequestHeaderBytes = 16 * 1024;

class AdmissionSession : public DrainableSession,
                         public std::enable_shared_from_this<AdmissionSession> {
 public:
  using Stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  // `socket` must use a strand executor (the listener accepts onto one).
  // `ssl_ctx` is kept alive for the life of the connection, so a certificate
  // reload never affects an established connection.
  AdmissionSession(boost::asio::ip::tcp::socket&& socket,
                   std::shared_ptr<boost::asio::ssl::context> ssl_ctx, const SessionEnv& env);
  ~AdmissionSession() override;

  void Start();
  void Drain() override;

 private:
  enum class Phase { kHandshake, kWaiting, kReading, kProcessing, kWriting, kClosing };

  void OnHandshake(boost::beast::error_code ec);
  void WaitForRequest();
  void OnFirstBytes(boost::beast::error_code ec, std::size_t n);
  void ReadRequest();
  void OnHeader(boost::beast::error_code ec, std::size_t n);
  void OnContinueSent(boost::beast::error_code ec, std::size_t n);
  void ReadBody();
  void ReadBodyBytes();
  void OnBodyBytes(boost::beast::error_code ec, std::size_t n);
  void OnRead(boost::beast::error_code ec, std::size_t n);
  void OnReadError(boost::beast::error_code ec);
  void HandleRequest();
  void StartLookup(admission::Result pending);
  void OnLookup(DeploymentLookup lookup, bool expired);
  void FinishAdmission(const admission::Result& result,
                       runtime::LogLevel level = runtime::LogLevel::kInfo);
  void SendPlain(int status, std::string_view text, bool close_after, std::string_view allow = {});
  void Send(int status, std::string_view content_type, std::string_view body, bool close_after,
            bool linger, std::string_view allow);
  void ConsumeBody();
  void OnWrite(bool close, bool linger, boost::beast::error_code ec, std::size_t n);
  void Linger();
  void OnLingerRead(boost::beast::error_code ec, std::size_t n);
  void ShutdownTls();
  void OnShutdown(boost::beast::error_code ec);
  void Close();
  // A completion handler calling `fn` that keeps the session alive and
  // turns an exception into a logged close.
  template <typename... Args>
  auto Guarded(void (AdmissionSession::*fn)(Args...));
  void OnHandlerException(const char* what);
  void OnDrain();
  bool Draining() const;

  std::shared_ptr<boost::asio::ssl::context> ssl_ctx_;  // before stream_: outlives it
  Stream stream_;
  const SessionEnv& env_;
  boost::asio::steady_timer drain_timer_;
  boost::beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  std::string target_;              // the request's target (RequestParser fills it)
  std::string chunked_body_;        // the body of a chunked request
  std::size_t body_size_ = 0;       // a Content-Length body: its size
  std::size_t body_in_buffer_ = 0;  // bytes of buffer_ that are the current request's body
  std::string_view body_;           // the current request's body
  std::string response_text_;       // the answer being written: header and body
  std::string remote_;
  std::uint64_t registry_id_ = 0;

  Phase phase_ = Phase::kHandshake;
  std::uint64_t served_ = 0;  // responses written on this connection
  bool drain_requested_ = false;
  bool keep_alive_ = true;
  bool in_flight_ = false;  // counted in the in-flight gauge
  bool lingering_ = false;
  std::uint64_t linger_bytes_ = 0;
  admission::Webhook webhook_ = admission::Webhook::kValidateDeployment;
  std::chrono::steady_clock::time_point request_start_;
  admission::Result pending_;  // a scale review waiting for its Deployment
};

// Both halves of the session (admission_session.cc, admission_session_send.cc)
// hand their completion handlers through this.
template <typename... Args>
auto AdmissionSession::Guarded(void (AdmissionSession::*fn)(Args...)) {
  return [self = shared_from_this(), fn](Args... args) {
    try {
      ((*self).*fn)(args...);
    } catch (const std::exception& e) {
      self->OnHandlerException(e.what());
    } catch (...) {
      self->OnHandlerException("unknown exception");
    }
  };
}

}  // namespace wasd::server

#endif  // WASD_SERVER_ADMISSION_SESSION_H_
