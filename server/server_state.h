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
  // The first scheduling.k8s.io discovery has answered (served, not served
  // or failed): until then the webhook does not know which hold a native pod
  // gets, and reports not ready (docs/design.md Q23).
  std::atomic<bool> api_checked{false};
  // The last answer said Workloads and PodGroups are served: native pods get
  // the scheduler hold. False (not served, unknown, failed): the gate.
  std::atomic<bool> native_api_served{false};

  // /readyz: 200 only while all four say so.
  bool Ready() const {
    return accepting.load() && cert_loaded.load() && !draining.load() && api_checked.load();
  }
};

}  // namespace wasd::server

#endif  // WASD_SERVER_SERVER_STATE_H_
