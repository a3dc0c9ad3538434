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
// Thread-safety: Open() before Start(), from one thread; Stop() from any
// thread. The handler is called concurrently from several threads.
#ifndef WASD_RUNTIME_HTTP_SERVER_H_
#define WASD_RUNTIME_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <functional>
#include <memory>
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
  std::string allow;  // Allow header for a 405
};

using HttpHandler =
    std::function<HttpResponse(boost::beast::http::verb method, std::string_view target)>;

class HttpServer : public std::enable_shared_from_this<HttpServer> {
 public:
  struct Limits {
    std::chrono::milliseconds read_timeout{30'000};
    std::chrono::milliseconds write_timeout{30'000};
  };

  // `name` appears in logs ("probes", "metrics").
  HttpServer(boost::asio::io_context& ioc, std::string name, HttpHandler handler,
             const Logger& logger, Limits limits);

  base::Status Open(const boost::asio::ip::tcp::endpoint& endpoint);
  void Start();
  void Stop();

  boost::asio::ip::tcp::endpoint local_endpoint() const;
  const std::string& name() const { return name_; }
  const HttpHandler& handler() const { return handler_; }
  const Logger& logger() const { return logger_; }
  const Limits& limits() const { return limits_; }

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
                     const Logger& logger, HttpServer::Limits limits = {});
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
