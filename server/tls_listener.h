// TlsListener: accepts connections on the admission port and starts an
// AdmissionSession for each, on a strand of its own. Each new connection
// gets the serving certificate current at accept time (hot reload affects
// new connections only).
//
// Thread-safety: Open() before Start(), from one thread. Stop() may be
// called from any thread. Accepting runs on the listener's strand.
#ifndef WASD_SERVER_TLS_LISTENER_H_
#define WASD_SERVER_TLS_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <memory>
#include <string>

#include "base/status.h"
#include "certs/serving_cert.h"
#include "server/admission_session.h"

namespace wasd::server {

class TlsListener : public std::enable_shared_from_this<TlsListener> {
 public:
  TlsListener(boost::asio::io_context& ioc, certs::ServingCertReloader& certs,
              const SessionEnv& env);

  // Binds and listens. Fails naming the address.
  base::Status Open(const boost::asio::ip::tcp::endpoint& endpoint);
  // Begins accepting; sets ServerState::accepting.
  void Start();
  // Stops accepting and closes the listening socket; clears accepting.
  void Stop();

  boost::asio::ip::tcp::endpoint local_endpoint() const;

 private:
  void DoAccept();
  void OnAccept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);
  std::shared_ptr<boost::asio::ssl::context> ContextForNewConnection();

  boost::asio::io_context& ioc_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  certs::ServingCertReloader& certs_;
  const SessionEnv& env_;
  // The certificate the cached Asio context wraps; replaced when the
  // reloader has a newer one. Touched only on strand_.
  std::shared_ptr<const certs::ServingCert> cert_in_use_;
  std::shared_ptr<boost::asio::ssl::context> ssl_ctx_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_TLS_LISTENER_H_
