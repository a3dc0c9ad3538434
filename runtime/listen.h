// Listen addresses and acceptors, the one way every listener of wasd (the
// webhook's admission TLS port, the probe and metrics ports of every
// command) reads its address flag and opens its socket.
// Pure parsing; OpenAcceptor is not thread-safe (call it before the
// acceptor is shared).
#ifndef WASD_RUNTIME_LISTEN_H_
#define WASD_RUNTIME_LISTEN_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>

#include "base/status.h"

namespace wasd::runtime {

// A listen address. `enabled` is false for the value "0", which turns the
// endpoint off (the controller-runtime convention for probe/metrics flags).
struct ListenAddress {
  std::string host;  // IP literal; "" never after parsing an enabled address
  std::uint16_t port = 0;
  bool enabled = true;
};

// "HOST:PORT", ":PORT" (all interfaces), "[v6]:PORT", or "0" (disabled).
// False when malformed; HOST must be an IP literal.
bool ParseListenAddress(std::string_view text, ListenAddress* out);
// True when `host` is an IPv4 or IPv6 literal.
bool IsIpLiteral(const std::string& host);
// The endpoint of an IP literal and a port; fails on anything else.
base::Result<boost::asio::ip::tcp::endpoint> MakeEndpoint(const std::string& host,
                                                          std::uint16_t port);
// "HOST:PORT" ("[v6]:PORT") of an endpoint, for logs.
std::string HostPort(const boost::asio::ip::tcp::endpoint& endpoint);

// Binds `acceptor` to `endpoint` (SO_REUSEADDR) and listens with `backlog`.
// Fails with "cannot listen on ADDR:PORT<what>: <reason>".
base::Status OpenAcceptor(boost::asio::ip::tcp::acceptor& acceptor,
                          const boost::asio::ip::tcp::endpoint& endpoint, int backlog,
                          const std::string& what);

}  // namespace wasd::runtime

#endif  // WASD_RUNTIME_LISTEN_H_
