#include "server/tls_listener.h"
#include "runtime/listen.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>

namespace wasd::server {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// After an accept error other than shutdown (descriptor limit reached,
// kernel out of buffers) retrying at once would spin; a short pause lets
// connections close and free descriptors.
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};
// Pending connections the kernel queues before accept: the API server opens
// a burst of connections after a restart; 1024 absorbs that.
constexpr int kListenBacklog = 1024;

}  // namespace

TlsListener::TlsListener(net::io_context& ioc, certs::ServingCertReloader& certs,
                         const SessionEnv& env)
    : ioc_(ioc),
      strand_(net::make_strand(ioc)),
      acceptor_(strand_),
      retry_timer_(strand_),
      certs_(certs),
      env_(env) {}

base::Status TlsListener::Open(const tcp::endpoint& endpoint) {
  return runtime::OpenAcceptor(acceptor_, endpoint, kListenBacklog, "");
}

tcp::endpoint TlsListener::local_endpoint() const {
  beast::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void TlsListener::Start() {
  env_.state->accepting.store(true);
  net::post(strand_, [self = shared_from_this()] { self->DoAccept(); });
}

void TlsListener::Stop() {
  env_.state->accepting.store(false);
  net::post(strand_, [self = shared_from_this()] {
    beast::error_code ignored;
    self->retry_timer_.cancel(ignored);
    self->acceptor_.close(ignored);
  });
}

void TlsListener::DoAccept() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept(net::make_strand(ioc_),
                         beast::bind_front_handler(&TlsListener::OnAccept, shared_from_this()));
}

std::shared_ptr<net::ssl::context> TlsListener::ContextForNewConnection() {
  std::shared_ptr<const certs::ServingCert> current = certs_.Current();
  if (current && current != cert_in_use_) {
    // The Asio context takes ownership of one reference to the SSL_CTX.
    SSL_CTX_up_ref(current->ssl_ctx());
    ssl_ctx_ = std::make_shared<net::ssl::context>(current->ssl_ctx());
    cert_in_use_ = std::move(current);
  }
  return ssl_ctx_;
}

void TlsListener::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
    env_.state->accepting.store(false);
    return;
  }
  if (ec) {
    env_.logger->Warn("accept failed", {{"error", ec.message()}});
    retry_timer_.expires_after(kAcceptRetryDelay);
    retry_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (!wait_ec) self->DoAccept();
    });
    return;
  }
  try {
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // responses are small: no Nagle delay
    std::make_shared<AdmissionSession>(std::move(socket), ContextForNewConnection(), env_)->Start();
  } catch (const std::exception& e) {
    env_.logger->Error("cannot start connection", {{"error", e.what()}});
  }
  DoAccept();
}

}  // namespace wasd::server
