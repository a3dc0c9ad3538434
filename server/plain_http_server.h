// PlainHttpServer: a small plain-HTTP server for the probe and metrics
// endpoints (/healthz, /readyz, /metrics). One listener, a session per
// connection on its own strand, a deadline on every read and write, tiny
// request limits (these endpoints take no body), keep-alive honoured.
//
// The handler runs on an I/O thread and must be cheap and non-blocking
// (reading atomics, rendering metrics text).
//
// Thread-safety: Open() before Start(), from one thread; Stop() from any
// thread. The handler is called concurrently from several threads.
#ifndef WASD_SERVER_PLAIN_HTTP_SERVER_H_
#define WASD_SERVER_PLAIN_HTTP_SERVER_H_

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

#include "server/log.h"

namespace wasd::server {

struct PlainResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string allow;  // Allow header for a 405
};

using PlainHandler =
    std::function<PlainResponse(boost::beast::http::verb method, std::string_view target)>;

class PlainHttpServer : public std::enable_shared_from_this<PlainHttpServer> {
 public:
  struct Limits {
    std::chrono::milliseconds read_timeout{30'000};
    std::chrono::milliseconds write_timeout{30'000};
  };

  // `name` appears in logs ("probes", "metrics").
  PlainHttpServer(boost::asio::io_context& ioc, std::string name, PlainHandler handler,
                  const Logger& logger, Limits limits);

  bool Open(const boost::asio::ip::tcp::endpoint& endpoint, std::string* error);
  void Start();
  void Stop();

  boost::asio::ip::tcp::endpoint local_endpoint() const;
  const std::string& name() const { return name_; }
  const PlainHandler& handler() const { return handler_; }
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
  const PlainHandler handler_;
  const Logger& logger_;
  const Limits limits_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_PLAIN_HTTP_SERVER_H_
