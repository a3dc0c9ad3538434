#include "kube/connection.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace wasd::kube {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

Connection::Connection(asio::ssl::context* tls) : tls_ctx_(tls) {}

Connection::~Connection() {
  error_code ignored;
  if (tls_ || plain_) Socket().close(ignored);
}

tcp::socket& Connection::Socket() { return tls_ ? tls_->next_layer() : *plain_; }

// Runs one asynchronous operation to completion on ioc_: `start(handler)`
// initiates it. A timer enforces the deadline and a stop_callback the stop
// request; both cancel the socket (and the resolver, through `start`'s
// captures), so the handler always runs and no handler outlives this call.
template <typename Start>
Status Connection::Run(const char* phase, Clock::time_point deadline, const std::stop_token& stop,
                       Start&& start) {
  if (stop.stop_requested()) {
    broken_ = true;
    return Status::Error(Status::Kind::kCancelled, std::string(phase) + " " + peer_);
  }
  bool done = false;
  bool timed_out = false;
  bool cancelled = false;
  error_code result;
  auto cancel_io = [this] {
    error_code ignored;
    if (tls_ || plain_) Socket().cancel(ignored);
    if (resolving_) resolving_->cancel();
  };
  asio::steady_timer timer(ioc_);
  timer.expires_at(deadline);
  ioc_.restart();
  start(
      [&](error_code ec, auto&&...) {
        result = ec;
        done = true;
        timer.cancel();
      },
      cancel_io);
  timer.async_wait([&](error_code ec) {
    if (!ec && !done) {
      timed_out = true;
      cancel_io();
    }
  });
  {
    std::stop_callback on_stop(stop, [&] {
      asio::post(ioc_, [&] {
        if (!done) {
          cancelled = true;
          cancel_io();
        }
      });
    });
    ioc_.run();
  }
  // A stop that raced with completion may have left a cancel posted; drain
  // it now so it cannot hit the next operation.
  ioc_.restart();
  ioc_.poll();
  if (!result) return Status::Ok();
  broken_ = true;
  const std::string where = std::string(phase) + " " + peer_;
  if (timed_out) return Status::Error(Status::Kind::kTimeout, where + ": deadline exceeded");
  if (cancelled) return Status::Error(Status::Kind::kCancelled, where);
  if (result == http::error::body_limit || result == http::error::header_limit) {
    return Status::Error(Status::Kind::kBadResponse, where + ": " + result.message());
  }
  return Status::Error(Status::Kind::kUnreachable, where + ": " + result.message());
}

Status Connection::Connect(const ServerUrl& url, const std::string& verify_name, bool verify,
                           Clock::time_point connect_deadline, Clock::time_point handshake_deadline,
                           const std::stop_token& stop) {
  peer_ =
      url.HostHeader() + (url.HostHeader().find(':') == std::string::npos ? ":" + url.port : "");
  tcp::resolver resolver(ioc_);
  tcp::resolver::results_type endpoints;
  resolving_ = &resolver;
  Status s = Run("resolve", connect_deadline, stop, [&](auto handler, auto&&) {
    resolver.async_resolve(url.host, url.port,
                           [&endpoints, handler](error_code ec, tcp::resolver::results_type r) {
                             endpoints = std::move(r);
                             handler(ec);
                           });
  });
  resolving_ = nullptr;
  if (!s.ok()) return s;
  if (tls_ctx_) {
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(ioc_, *tls_ctx_);
  } else {
    plain_ = std::make_unique<tcp::socket>(ioc_);
  }
  s = Run("connect", connect_deadline, stop,
          [&](auto handler, auto&&) { asio::async_connect(Socket(), endpoints, handler); });
  if (!s.ok() || !tls_) return s;
  error_code ignored;
  Socket().set_option(tcp::no_delay(true), ignored);

  SSL* ssl = tls_->native_handle();
  error_code addr_ec;
  const auto addr = asio::ip::make_address(verify_name, addr_ec);
  if (addr_ec) {  // SNI only for names (the macro form needs a C cast)
    SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(verify_name.c_str()));
  }
  if (verify) {
    tls_->set_verify_mode(asio::ssl::verify_peer);
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (!addr_ec) {
      X509_VERIFY_PARAM_set1_ip_asc(param, addr.to_string().c_str());
    } else {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
    }
  } else {
    tls_->set_verify_mode(asio::ssl::verify_none);
  }
  s = Run("TLS handshake with", handshake_deadline, stop, [&](auto handler, auto&&) {
    tls_->async_handshake(asio::ssl::stream_base::client, handler);
  });
  if (!s.ok() && s.kind() == Status::Kind::kUnreachable && verify) {
    const long v = SSL_get_verify_result(ssl);
    if (v != X509_V_OK) {
      return Status::Error(Status::Kind::kTlsVerify, "server certificate of " + peer_ +
                                                         " did not verify" + " (checked name " +
                                                         verify_name +
                                                         "): " + X509_verify_cert_error_string(v));
    }
  }
  return s;
}

Status Connection::Write(http::request<http::string_body>& request, Clock::time_point deadline,
                         const std::stop_token& stop) {
  return Run("write to", deadline, stop, [&](auto handler, auto&&) {
    if (tls_) {
      http::async_write(*tls_, request, handler);
    } else {
      http::async_write(*plain_, request, handler);
    }
  });
}

namespace {

// A read failure that saw no byte of a response: the peer closed an idle
// keep-alive connection.
bool IsClosedBeforeResponse(const Status& s, std::size_t buffered) {
  return !s.ok() && s.kind() == Status::Kind::kUnreachable && buffered == 0;
}

}  // namespace

template <typename Parser, typename ReadOp>
Status Connection::ReadWith(Parser& parser, Clock::time_point deadline, const std::stop_token& stop,
                            ReadOp read) {
  parser.header_limit(kMaxHeaderBytes);
  bool got_bytes = false;
  Status s = Run("read from", deadline, stop, [&](auto handler, auto&&) {
    auto h = [&got_bytes, handler](error_code ec, std::size_t n) {
      got_bytes = n > 0;
      handler(ec);
    };
    if (tls_) {
      read(*tls_, buffer_, parser, h);
    } else {
      read(*plain_, buffer_, parser, h);
    }
  });
  failed_before_response_ = IsClosedBeforeResponse(s, got_bytes ? 1 : buffer_.size());
  return s;
}

Status Connection::Read(http::response_parser<http::string_body>& parser,
                        Clock::time_point deadline, const std::stop_token& stop) {
  return ReadWith(parser, deadline, stop, [](auto& stream, auto& buffer, auto& p, auto handler) {
    http::async_read(stream, buffer, p, std::move(handler));
  });
}

Status Connection::ReadHeader(http::response_parser<http::buffer_body>& parser,
                              Clock::time_point deadline, const std::stop_token& stop) {
  return ReadWith(parser, deadline, stop, [](auto& stream, auto& buffer, auto& p, auto handler) {
    http::async_read_header(stream, buffer, p, std::move(handler));
  });
}

Status Connection::ReadBody(http::response_parser<http::buffer_body>& parser,
                            Clock::time_point deadline, const std::stop_token& stop) {
  return Run("read from", deadline, stop, [&](auto handler, auto&&) {
    // need_buffer only says the caller's buffer is full: not an error.
    auto h = [handler](error_code ec, std::size_t) {
      handler(ec == http::error::need_buffer ? error_code() : ec);
    };
    if (tls_) {
      http::async_read_some(*tls_, buffer_, parser, h);
    } else {
      http::async_read_some(*plain_, buffer_, parser, h);
    }
  });
}

}  // namespace wasd::kube
