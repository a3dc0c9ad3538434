// Connection: one client connection to the API server (TCP, optionally TLS)
// whose blocking operations each run on the connection's own io_context with
// a deadline and a stop_token. Internal to kube/: the Client pools these.
//
// Every operation returns a Status: kTimeout when the deadline passed,
// kCancelled when stop was requested, kTlsVerify when the server certificate
// failed verification, kUnreachable for any other transport failure (the
// message names the phase and the peer). After any failure the connection is
// broken() and must be dropped.
//
// Not thread-safe: one thread at a time (the Client hands a connection to one
// call at a time).
#ifndef WASD_KUBE_CONNECTION_H_
#define WASD_KUBE_CONNECTION_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <stop_token>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/status.h"
#include "kube/resource.h"

namespace wasd::kube {

using base::Result;
using base::Status;

using Clock = std::chrono::steady_clock;
namespace http = boost::beast::http;

class Connection {
 public:
  // Response headers larger than this are refused: real API server headers
  // are < 2 KiB; 64 KiB bounds a misbehaving peer.
  static constexpr std::uint32_t kMaxHeaderBytes = 64 * 1024;

  // `tls` is null for plain http; it must outlive the connection.
  explicit Connection(boost::asio::ssl::context* tls);
  ~Connection();

  // Resolves, connects (by connect_deadline) and, for TLS, handshakes (by
  // handshake_deadline), verifying the certificate against `verify_name`
  // (a DNS name or an IP literal) unless `verify` is false.
  Status Connect(const ServerUrl& url, const std::string& verify_name, bool verify,
                 Clock::time_point connect_deadline, Clock::time_point handshake_deadline,
                 const std::stop_token& stop);

  Status Write(http::request<http::string_body>& request, Clock::time_point deadline,
               const std::stop_token& stop);
  // Reads one whole response into `parser` (the caller sets its body limit).
  Status Read(http::response_parser<http::string_body>& parser, Clock::time_point deadline,
              const std::stop_token& stop);
  // Reads the response header only.
  Status ReadHeader(http::response_parser<http::buffer_body>& parser, Clock::time_point deadline,
                    const std::stop_token& stop);
  // Reads whatever body bytes are available (at least some progress) into
  // the parser's buffer_body; check parser.is_done() for the end.
  Status ReadBody(http::response_parser<http::buffer_body>& parser, Clock::time_point deadline,
                  const std::stop_token& stop);

  bool broken() const { return broken_; }
  // True when the last failed read saw no byte of a response: on a reused
  // keep-alive connection this is the server having closed it while idle.
  bool failed_before_response() const { return failed_before_response_; }
  // Set by the pool when the connection is handed out a second time.
  bool reused = false;

 private:
  // Read and ReadHeader: `read` starts the Beast read on the stream in use.
  template <typename Parser, typename ReadOp>
  Status ReadWith(Parser& parser, Clock::time_point deadline, const std::stop_token& stop,
                  ReadOp read);
  template <typename Start>
  Status Run(const char* phase, Clock::time_point deadline, const std::stop_token& stop,
             Start&& start);
  boost::asio::ip::tcp::socket& Socket();

  boost::asio::io_context ioc_;
  boost::asio::ssl::context* tls_ctx_;
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
  std::unique_ptr<boost::asio::ip::tcp::socket> plain_;
  boost::beast::flat_buffer buffer_;
  boost::asio::ip::tcp::resolver* resolving_ = nullptr;  // set while resolving
  std::string peer_;                                     // "host:port" for messages
  bool broken_ = false;
  bool failed_before_response_ = false;
};

}  // namespace wasd::kube

#endif  // WASD_KUBE_CONNECTION_H_
