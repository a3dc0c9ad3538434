// OpenAcceptor: opens, binds and listens an acceptor, the one way every
// listener of the webhook (admission TLS, probes, metrics) does it.
// Not thread-safe: call before the acceptor is shared.
#ifndef WASD_SERVER_LISTEN_H_
#define WASD_SERVER_LISTEN_H_

#include <string>

#include <boost/asio/ip/tcp.hpp>

namespace wasd::server {

// Binds `acceptor` to `endpoint` (SO_REUSEADDR) and listens with `backlog`.
// On failure returns false with *error = "cannot listen on ADDR:PORT<what>: <reason>".
inline bool OpenAcceptor(boost::asio::ip::tcp::acceptor& acceptor,
                         const boost::asio::ip::tcp::endpoint& endpoint, int backlog,
                         const std::string& what, std::string* error) {
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(backlog, ec);
  if (!ec) return true;
  *error = "cannot listen on " + endpoint.address().to_string() + ":" +
           std::to_string(endpoint.port()) + what + ": " + ec.message();
  return false;
}

}  // namespace wasd::server

#endif  // WASD_SERVER_LISTEN_H_
