// The write and close half of AdmissionSession (server/admission_session.h):
// the response, the linger after a refused body, the TLS close and the drain
// on SIGTERM.
#include <openssl/ssl.h>
#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/status.hpp>
#include <utility>

#include "server/admission_session.h"
#include "server/admission_session_limits.h"
#include "server/router.h"

namespace wasd::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace session_limits;  // NOLINT(google-build-using-namespace): this session's own bounds

}  // namespace

void AdmissionSession::SendPlain(int status, std::string_view text, bool close_after,
                                 std::string_view allow) {
  Send(status, "text/plain; charset=utf-8", text, close_after, close_after, allow);
}

void AdmissionSession::Send(int status, std::string_view content_type, std::string_view body,
                            bool close_after, bool linger, std::string_view allow) {
  ConsumeBody();  // the request is answered: its bytes may go
  const bool close = close_after || !keep_alive_ || Draining();
  // The bytes Beast's serializer wrote for an http::response with these
  // fields set in this order (Content-Length by prepare_payload), header and
  // body in one buffer: one TLS record, no serializer, no field allocations.
  std::string& out = response_text_;
  out.clear();
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += ToStd(http::obsolete_reason(static_cast<http::status>(status)));
  out += "\r\nContent-Type: ";
  out += content_type;
  if (!allow.empty()) {
    out += "\r\nAllow: ";
    out += allow;
  }
  if (close) out += "\r\nConnection: close";
  out += "\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\n\r\n";
  out += body;
  phase_ = Phase::kWriting;
  beast::get_lowest_layer(stream_).expires_after(env_.config->write_timeout);
  net::async_write(stream_, net::buffer(out),
                   [self = shared_from_this(), close, linger](beast::error_code ec, std::size_t n) {
                     try {
                       self->OnWrite(close, linger, ec, n);
                     } catch (...) {
                       self->Close();
                     }
                   });
}

void AdmissionSession::OnWrite(bool close, bool linger, beast::error_code ec, std::size_t) {
  if (in_flight_) {
    in_flight_ = false;
    env_.metrics->AddInFlight(-1);
  }
  ++served_;
  if (ec) {
    env_.logger->Debug("response write failed", {{"remote", remote_}, {"error", ec.message()}});
    Close();
    return;
  }
  if (linger) {
    Linger();
    return;
  }
  if (close) {
    ShutdownTls();
    return;
  }
  WaitForRequest();
}

void AdmissionSession::Linger() {
  phase_ = Phase::kClosing;
  if (!lingering_) {
    lingering_ = true;
    beast::get_lowest_layer(stream_).expires_after(kLingerTimeout);
  }
  buffer_.consume(buffer_.size());
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          Guarded(&AdmissionSession::OnLingerRead));
}

void AdmissionSession::OnLingerRead(beast::error_code ec, std::size_t n) {
  linger_bytes_ += n;
  if (ec || linger_bytes_ > kLingerMaxBytes) {
    Close();
    return;
  }
  buffer_.commit(n);
  Linger();
}

void AdmissionSession::ShutdownTls() {
  phase_ = Phase::kClosing;
  beast::get_lowest_layer(stream_).expires_after(kTlsShutdownTimeout);
  stream_.async_shutdown(Guarded(&AdmissionSession::OnShutdown));
}

void AdmissionSession::OnShutdown(beast::error_code) { Close(); }

void AdmissionSession::Close() {
  phase_ = Phase::kClosing;
  beast::error_code ignored;
  drain_timer_.cancel(ignored);
  auto& socket = beast::get_lowest_layer(stream_).socket();
  if (socket.is_open()) {
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }
}

void AdmissionSession::Drain() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    try {
      self->OnDrain();
    } catch (...) {
      self->Close();
    }
  });
}

void AdmissionSession::OnDrain() {
  drain_requested_ = true;
  // Sessions busy with a request see the flag when they finish it and close
  // after answering; only one waiting for a request needs waking.
  if (phase_ != Phase::kWaiting) return;
  drain_timer_.expires_after(served_ > 0 ? kIdleConnectionDrainGrace : kFreshConnectionDrainGrace);
  drain_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec && self->phase_ == Phase::kWaiting) self->Close();
  });
}

}  // namespace wasd::server
