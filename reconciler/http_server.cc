#include "reconciler/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace wasd::reconciler {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpHandler& handler)
      : stream_(std::move(socket)), handler_(handler) {}

  void Run() {
    parser_.header_limit(kMaxHeaderBytes);
    parser_.body_limit(0);
    stream_.expires_after(kReadTimeout);
    http::async_read(
        stream_, buffer_, parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
      return;
    }
    const auto& req = parser_.get();
    HttpReply reply;
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      reply = {405, "text/plain; charset=utf-8", "method not allowed\n"};
    } else {
      std::string path(req.target());
      if (const auto q = path.find('?'); q != std::string::npos) path.resize(q);
      try {
        reply = handler_(path);
      } catch (...) {
        reply = {500, "text/plain; charset=utf-8", "internal error\n"};
      }
    }
    res_.result(static_cast<unsigned>(reply.code));
    res_.version(req.version());
    res_.set(http::field::content_type, reply.content_type);
    res_.keep_alive(false);
    if (req.method() != http::verb::head) res_.body() = std::move(reply.body);
    res_.prepare_payload();
    stream_.expires_after(kReadTimeout);
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    });
  }

  beast::tcp_stream stream_;
  const HttpHandler& handler_;
  beast::flat_buffer buffer_;
  http::request_parser<http::empty_body> parser_;
  http::response<http::string_body> res_;
};

}  // namespace

class HttpServer::Impl {
 public:
  base::Status Start(const std::string& address, HttpHandler handler) {
    handler_ = std::move(handler);
    const auto colon = address.rfind(':');
    if (colon == std::string::npos) {
      return base::Status::Error(base::Status::Kind::kInvalidArgument,
                                 "address " + address + " is not host:port");
    }
    std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "0.0.0.0";
    beast::error_code ec;
    const asio::ip::address ip = asio::ip::make_address(host, ec);
    if (ec) {
      return base::Status::Error(base::Status::Kind::kInvalidArgument,
                                 "address " + address + ": host must be an IP address");
    }
    unsigned long port_number = 0;
    try {
      port_number = std::stoul(port);
    } catch (...) {
      port_number = 70000;
    }
    if (port_number > 65535) {
      return base::Status::Error(base::Status::Kind::kInvalidArgument,
                                 "address " + address + ": bad port");
    }
    const tcp::endpoint ep(ip, static_cast<unsigned short>(port_number));
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return base::Status::Error(base::Status::Kind::kUnreachable,
                                 "listen on " + address + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] {
      try {
        ioc_.run();
      } catch (...) {
        // Handlers catch their own errors; nothing may escape run().
      }
    });
    return base::Status::Ok();
  }

  void Stop() {
    asio::post(ioc_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
    });
    ioc_.stop();
    if (thread_.joinable()) thread_.join();
  }

  unsigned short port() const { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept(asio::make_strand(ioc_),
                           [this](beast::error_code ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor_.is_open())
                               return;
                             if (!ec) {
                               std::make_shared<Session>(std::move(socket), handler_)->Run();
                               Accept();
                               return;
                             }
                             // EMFILE and the like: accepting again at once would spin.
                             retry_.expires_after(std::chrono::milliseconds(100));
                             retry_.async_wait([this](beast::error_code wait_ec) {
                               if (!wait_ec && acceptor_.is_open()) Accept();
                             });
                           });
  }

  asio::io_context ioc_{1};
  tcp::acceptor acceptor_{ioc_};
  asio::steady_timer retry_{ioc_};
  HttpHandler handler_;
  std::thread thread_;
  unsigned short port_ = 0;
};

HttpServer::HttpServer() : impl_(std::make_unique<Impl>()) {}
HttpServer::~HttpServer() { Stop(); }

base::Status HttpServer::Start(const std::string& address, HttpHandler handler) {
  return impl_->Start(address, std::move(handler));
}

unsigned short HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() {
  if (impl_) impl_->Stop();
}

}  // namespace wasd::reconciler
