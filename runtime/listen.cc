#include "runtime/listen.h"

#include <arpa/inet.h>

#include <charconv>

namespace wasd::runtime {

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

bool ParseListenAddress(std::string_view text, ListenAddress* out) {
  if (text == "0") {
    *out = ListenAddress{"", 0, false};
    return true;
  }
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string::npos) return false;
  } else if (host.find(':') != std::string::npos) {
    return false;  // an IPv6 host needs brackets
  }
  if (host.empty()) host = "0.0.0.0";
  if (!IsIpLiteral(host)) return false;
  std::uint16_t port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [p, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || p != end) return false;
  *out = ListenAddress{host, port, true};
  return true;
}

base::Result<boost::asio::ip::tcp::endpoint> MakeEndpoint(const std::string& host,
                                                          std::uint16_t port) {
  boost::system::error_code ec;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, ec);
  if (ec) {
    return base::Status::Error(base::Status::Kind::kInvalidArgument,
                               "invalid address " + host + ": " + ec.message());
  }
  return boost::asio::ip::tcp::endpoint(address, port);
}

std::string HostPort(const boost::asio::ip::tcp::endpoint& endpoint) {
  const std::string ip = endpoint.address().to_string();
  return (endpoint.address().is_v6() ? "[" + ip + "]" : ip) + ":" + std::to_string(endpoint.port());
}

base::Status OpenAcceptor(boost::asio::ip::tcp::acceptor& acceptor,
                          const boost::asio::ip::tcp::endpoint& endpoint, int backlog,
                          const std::string& what) {
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(backlog, ec);
  if (!ec) return base::Status::Ok();
  return base::Status::Error(base::Status::Kind::kUnreachable,
                             "cannot listen on " + HostPort(endpoint) + what + ": " + ec.message());
}

}  // namespace wasd::runtime
