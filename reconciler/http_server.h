// HttpServer: a small plain-HTTP server for the reconciler's probes and
// metrics (/healthz, /readyz, /metrics). GET only; one request per
// connection (`Connection: close`), so a stuck scraper holds one socket for
// at most kReadTimeout.
//
// Runs its own thread and io_context; the handler is called on that thread
// and must be quick (render text, read atomics).
//
// Thread-safe: Start/Stop from the owner thread; the handler must be
// thread-safe with respect to the rest of the program.
#ifndef WASD_RECONCILER_HTTP_SERVER_H_
#define WASD_RECONCILER_HTTP_SERVER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"

namespace wasd::reconciler {

struct HttpReply {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Receives the request target's path (query string removed).
using HttpHandler = std::function<HttpReply(const std::string& path)>;

// A probe request is a few hundred bytes; 5 s is plenty even on a loaded
// node and bounds what a slow client can hold.
inline constexpr std::chrono::seconds kReadTimeout{5};
// Request headers above this are refused (probes and scrapers send < 1 KiB).
inline constexpr std::size_t kMaxHeaderBytes = std::size_t{8} * 1024;

class HttpServer {
 public:
  HttpServer();
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds `address` ("host:port", ":port" = all interfaces, port 0 = any)
  // and starts serving. Fails with kInvalidArgument / kUnreachable and a
  // message when the address is unusable or taken.
  base::Status Start(const std::string& address, HttpHandler handler);
  // The bound port (after Start).
  unsigned short port() const;
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_HTTP_SERVER_H_
