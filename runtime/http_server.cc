#include "runtime/http_server.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <optional>
#include <type_traits>
#include <utility>

namespace wasd::runtime {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// Probes and scrapes are GETs with a few short headers and no body.
constexpr std::uint32_t kMaxHeaderBytes = 8 * 1024;
constexpr std::uint64_t kMaxBodyBytes = std::uint64_t{4} * 1024;
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};
constexpr int kListenBacklog = 128;

// One connection. Stream is beast::tcp_stream (plain) or an ssl_stream over
// it (HttpSecurity::tls): the TLS one shakes hands first, under the read
// deadline.
template <class Stream>
class HttpSession : public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  HttpSession(tcp::socket&& socket, std::shared_ptr<HttpServer> server,
              std::shared_ptr<net::ssl::context> tls)
      : tls_(std::move(tls)), stream_(MakeStream(std::move(socket))), server_(std::move(server)) {}

  void Start() {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kTls) {
        self->Layer().expires_after(self->server_->limits().read_timeout);
        self->stream_.async_handshake(net::ssl::stream_base::server,
                                      beast::bind_front_handler(&HttpSession::OnHandshake, self));
      } else {
        self->DoRead();
      }
    });
  }

 private:
  Stream MakeStream(tcp::socket&& socket) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls_);
    } else {
      return Stream(std::move(socket));
    }
  }

  beast::tcp_stream& Layer() { return beast::get_lowest_layer(stream_); }

  void OnHandshake(beast::error_code ec) {
    if (ec) {
      server_->logger().Debug("tls handshake failed",
                              {{"server", server_->name()}, {"error", ec.message()}});
      Close();
      return;
    }
    DoRead();
  }

  void DoRead() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxBodyBytes);
    // One deadline per request, the idle wait included: these clients
    // (kubelet, Prometheus) send at once or not at all.
    Layer().expires_after(server_->limits().read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&HttpSession::OnRead, this->shared_from_this()));
  }

  HttpResponse Answer(const http::request<http::string_body>& req) {
    const std::string_view target(req.target().data(), req.target().size());
    if (const HttpSecurity& security = server_->security(); security.gate) {
      const auto authorization = req[http::field::authorization];
      if (std::optional<HttpResponse> refused =
              security.gate(target, std::string_view(authorization.data(), authorization.size())))
        return *std::move(refused);
    }
    return server_->handler()(req.method(), target);
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec) {
      Close();
      return;
    }
    try {
      const auto& req = parser_->get();
      HttpResponse r = Answer(req);
      response_ = {};
      response_.result(static_cast<http::status>(r.status));
      response_.version(11);
      response_.set(http::field::content_type, r.content_type);
      if (!r.allow.empty()) response_.set(http::field::allow, r.allow);
      if (!r.www_authenticate.empty())
        response_.set(http::field::www_authenticate, r.www_authenticate);
      response_.keep_alive(req.keep_alive());
      if (req.method() == http::verb::head) {
        response_.content_length(r.body.size());
      } else {
        response_.body() = std::move(r.body);
        response_.prepare_payload();
      }
    } catch (const std::exception& e) {
      server_->logger().Error("probe handler failed",
                              {{"server", server_->name()}, {"error", e.what()}});
      Close();
      return;
    }
    Layer().expires_after(server_->limits().write_timeout);
    http::async_write(stream_, response_,
                      beast::bind_front_handler(&HttpSession::OnWrite, this->shared_from_this()));
  }

  void OnWrite(beast::error_code ec, std::size_t) {
    if (ec || !response_.keep_alive()) {
      Close();
      return;
    }
    DoRead();
  }

  // No TLS close_notify: scrapers do not wait for one, and a peer that
  // never answers it would hold the connection.
  void Close() {
    beast::error_code ignored;
    Layer().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Layer().close();
  }

  std::shared_ptr<net::ssl::context> tls_;  // before stream_: it uses it
  Stream stream_;
  std::shared_ptr<HttpServer> server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

HttpServer::HttpServer(net::io_context& ioc, std::string name, HttpHandler handler,
                       const Logger& logger, Limits limits, HttpSecurity security)
    : ioc_(ioc),
      strand_(net::make_strand(ioc)),
      acceptor_(strand_),
      retry_timer_(strand_),
      name_(std::move(name)),
      handler_(std::move(handler)),
      logger_(logger),
      limits_(limits),
      security_(std::move(security)) {}

base::Status HttpServer::Open(const tcp::endpoint& endpoint) {
  return OpenAcceptor(acceptor_, endpoint, kListenBacklog, " (" + name_ + ")");
}

tcp::endpoint HttpServer::local_endpoint() const {
  beast::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void HttpServer::Start() {
  net::post(strand_, [self = shared_from_this()] { self->DoAccept(); });
}

void HttpServer::Stop() {
  net::post(strand_, [self = shared_from_this()] {
    beast::error_code ignored;
    self->retry_timer_.cancel(ignored);
    self->acceptor_.close(ignored);
  });
}

void HttpServer::DoAccept() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept(net::make_strand(ioc_),
                         beast::bind_front_handler(&HttpServer::OnAccept, shared_from_this()));
}

void HttpServer::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    logger_.Warn("accept failed", {{"server", name_}, {"error", ec.message()}});
    retry_timer_.expires_after(kAcceptRetryDelay);
    retry_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (!wait_ec) self->DoAccept();
    });
    return;
  }
  try {
    if (security_.secure()) {
      std::shared_ptr<net::ssl::context> tls = security_.tls();
      if (tls) {
        std::make_shared<HttpSession<beast::ssl_stream<beast::tcp_stream>>>(
            std::move(socket), shared_from_this(), std::move(tls))
            ->Start();
      } else {
        logger_.Warn("no TLS certificate: connection refused", {{"server", name_}});
      }
    } else {
      std::make_shared<HttpSession<beast::tcp_stream>>(std::move(socket), shared_from_this(),
                                                       nullptr)
          ->Start();
    }
  } catch (const std::exception& e) {
    logger_.Error("cannot start connection", {{"server", name_}, {"error", e.what()}});
  }
  DoAccept();
}

HttpServerThread::~HttpServerThread() { Stop(); }

base::Status HttpServerThread::Start(const ListenAddress& address, std::string name,
                                     HttpHandler handler, const Logger& logger,
                                     HttpServer::Limits limits, HttpSecurity security) {
  base::Result<tcp::endpoint> endpoint = MakeEndpoint(address.host, address.port);
  if (!endpoint.ok()) return endpoint.status();
  server_ = std::make_shared<HttpServer>(ioc_, std::move(name), std::move(handler), logger, limits,
                                         std::move(security));
  if (base::Status s = server_->Open(*endpoint); !s.ok()) {
    server_.reset();
    return s;
  }
  server_->Start();
  thread_ = std::thread([this] {
    try {
      ioc_.run();
    } catch (const std::exception& e) {
      server_->logger().Error("probe server stopped",
                              {{"server", server_->name()}, {"error", e.what()}});
    }
  });
  return base::Status::Ok();
}

std::uint16_t HttpServerThread::port() const {
  return server_ ? server_->local_endpoint().port() : 0;
}

void HttpServerThread::Stop() {
  if (!thread_.joinable()) return;
  server_->Stop();
  ioc_.stop();
  thread_.join();
}

}  // namespace wasd::runtime
