// ServerState: the flags the readiness probe reads and the listener and the
// shutdown path write. Thread-safe: plain atomics.
#ifndef WASD_SERVER_SERVER_STATE_H_
#define WASD_SERVER_SERVER_STATE_H_

#include <atomic>

namespace wasd::server {

struct ServerState {
  std::atomic<bool> accepting{false};    // the TLS listener is accepting connections
  std::atomic<bool> cert_loaded{false};  // a serving certificate is in use
  std::atomic<bool> draining{false};     // SIGTERM received

  // /readyz: 200 only while all three say so.
  bool Ready() const { return accepting.load() && cert_loaded.load() && !draining.load(); }
};

}  // namespace wasd::server

#endif  // WASD_SERVER_SERVER_STATE_H_
