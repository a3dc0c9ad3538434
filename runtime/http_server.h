// HttpServer: the one small plain-HTTP server of wasd, for the probe and
// metrics endpoints (/healthz, /readyz, /metrics) of every command. One
// listener, a session per connection on its own strand, a deadline on every
// read and write, tiny request limits (these endpoints take no body),
// keep-alive honoured.
//
// The webhook runs it on its own I/O threads; a command without an
// io_context (the reconciler) uses HttpServerThread, which gives it one
// thread of its own.
//
// The handler runs on an I/O thread and must be cheap and non-blocking
// (reading atomics, rendering metrics text).
//
// HttpSecurity turns a server into an HTTPS one with a gate in front of the
// handler (the secure /metrics: metricsauth/). The gate may block (it asks
// the API server), so a gated server gets a thread of its own
// (HttpServerThread), never the webhook's admission threads.
//
// Thread-safety: Open() before Start(), from one thread; Stop() from any
// thread. The handler is called concurrently from several threads.
#ifndef WASD_RUNTIME_HTTP_SERVER_H_
#define WASD_RUNTIME_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"
#include "runtime/listen.h"
#include "runtime/log.h"

namespace wasd::runtime {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string allow;             // Allow header for a 405
  std::string www_authenticate;  // WWW-Authenticate header for a 401
};

using HttpHandler =
    std::function<HttpResponse(boost::beast::http::verb method, std::string_view target)>;

// TLS and a gate for one server; both empty: plain HTTP, every request goes
// to the handler.
struct HttpSecurity {
  // The TLS context a new connection gets; a null one refuses the
  // connection. Empty function: plain HTTP.
  std::function<std::shared_ptr<boost::asio::ssl::context>()> tls;
  // Runs before the handler with the request's target and Authorization
  // header; an answer it returns (401, 403, 503) is sent instead of the
  // handler's. May block.
  std::function<std::optional<HttpResponse>(std::string_view target,
                                            std::string_view authorization)>
      gate;

  bool secure() const { return static_cast<bool>(tls); }
};

// --metrics-secure, --metrics-cert-file and --metrics-key-file as given;
// cmd/ turns them into an HttpSecurity (metricsauth/).
struct MetricsServing {
  bool secure = true;     // HTTPS, TokenReview + SubjectAccessReview
  std::string cert_file;  // empty: the command's default (the webhook's
  std::string key_file;   // serving pair; for the reconciler self-signed)
};

class HttpServer : public std::enable_shared_from_this<HttpServer> {
 public:
  struct Limits {
    std::chrono::milliseconds read_timeout{30'000};
    std::chrono::milliseconds write_timeout{30'000};
  };

  // `name` appears in logs ("probes", "metrics").
  HttpServer(boost::asio::io_context& ioc, std::string name, HttpHandler handler,
             const Logger& logger, Limits limits, HttpSecurity security = {});

  base::Status Open(const boost::asio::ip::tcp::endpoint& endpoint);
  void Start();
  void Stop();

  boost::asio::ip::tcp::endpoint local_endpoint() const;
  const std::string& name() const { return name_; }
  const HttpHandler& handler() const { return handler_; }
  const Logger& logger() const { return logger_; }
  const Limits& limits() const { return limits_; }
  const HttpSecurity& security() const { return security_; }

 private:
  void DoAccept();
  void OnAccept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  const std::string name_;
  const HttpHandler handler_;
  const Logger& logger_;
  const Limits limits_;
  const HttpSecurity security_;
};

// An HttpServer with an io_context and a thread of its own.
class HttpServerThread {
 public:
  HttpServerThread() = default;
  ~HttpServerThread();  // Stop()s
  HttpServerThread(const HttpServerThread&) = delete;
  HttpServerThread& operator=(const HttpServerThread&) = delete;

  // Binds `address` (see ParseListenAddress; port 0 = any free port) and
  // starts serving on a new thread. Fails when the address is unusable or
  // taken.
  base::Status Start(const ListenAddress& address, std::string name, HttpHandler handler,
                     const Logger& logger, HttpServer::Limits limits = {},
                     HttpSecurity security = {});
  // The bound port (after Start).
  std::uint16_t port() const;
  void Stop();

 private:
  boost::asio::io_context ioc_{1};
  std::shared_ptr<HttpServer> server_;
  std::thread thread_;
};

}  // namespace wasd::runtime

#endif  // WASD_RUNTIME_HTTP_SERVER_H_
