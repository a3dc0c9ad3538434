// WebhookServer: the running `wasd webhook` process — the TLS admission
// listener, the probe and metrics servers, the certificate reload timer, the
// lookup worker pool for deployments/scale, and the shutdown sequence:
//
//   SIGTERM/SIGINT -> readiness off at once -> keep accepting and answering
//   for `shutdown_delay` (endpoints still route here) -> stop accepting -> idle
//   connections closed, requests being received or processed answered (with
//   Connection: close) -> exit 0 when the last connection is gone, or when
//   the grace period ends. A second signal exits at once.
//
// Thread-safety: construct and Run() from one thread; Run() blocks and uses
// `io_threads` threads (the calling one included).
#ifndef WASD_SERVER_WEBHOOK_SERVER_H_
#define WASD_SERVER_WEBHOOK_SERVER_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "certs/serving_cert.h"
#include "runtime/http_server.h"
#include "runtime/log.h"
#include "server/admission_metrics.h"
#include "server/admission_session.h"
#include "server/deployment_source.h"
#include "server/server_state.h"
#include "server/session_registry.h"
#include "server/tls_listener.h"
#include "server/webhook_config.h"

namespace wasd::server {

class WebhookServer {
 public:
  WebhookServer(const WebhookConfig& config, const runtime::Logger& logger,
                std::unique_ptr<DeploymentSource> deployments);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Loads the certificate, binds every port, serves until shut down.
  // Returns the process exit code: 0 after a signal, 1 when startup fails
  // (certificate unusable, address in use).
  int Run();

 private:
  bool Setup();
  bool OpenPlainServers();
  std::string MetricsText() const;  // for the start log line
  void WaitForSignal();
  void BeginShutdown(int signal_number);
  void StopAccepting();
  void FinishShutdown(const char* why);
  void ScheduleReload();
  // Q23: re-discovers scheduling.k8s.io every --api-check-interval, on the
  // lookup pool (blocking I/O, never on an I/O thread); the answer picks the
  // Options a review gets (ServerState::native_api_served) and lets /readyz
  // say ready.
  void ScheduleApiCheck(std::chrono::milliseconds delay);
  void CheckSchedulingApi();
  void PollCertificate();
  void RunIoThread();

  const WebhookConfig config_;
  const runtime::Logger& logger_;
  AdmissionMetrics metrics_;
  ServerState state_;
  SessionRegistry registry_;
  certs::ServingCertReloader certs_;
  std::unique_ptr<DeploymentSource> deployments_;
  // Distinct out-of-scope resources logged; 64 is far more than a cluster's
  // misregistrations, small enough that a client cannot make it matter.
  OnceFilter out_of_scope_{64};
  SessionEnv env_;
  // Declared after everything the handlers use, so that it is destroyed
  // (with any handlers still queued) before them.
  boost::asio::io_context ioc_;
  boost::asio::thread_pool lookup_pool_;
  ScaleLookupBudget lookup_budget_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer reload_timer_;
  boost::asio::steady_timer api_timer_;
  std::string last_api_;  // the last discovery, described; touched by one check at a time
  boost::asio::steady_timer grace_timer_;
  std::shared_ptr<TlsListener> listener_;
  std::shared_ptr<runtime::HttpServer> probe_server_;
  std::shared_ptr<runtime::HttpServer> metrics_server_;
  // The HTTPS /metrics (config_.metrics_security), on its own thread;
  // declared after everything its handler reads.
  runtime::HttpServerThread secure_metrics_;
  bool shutting_down_ = false;         // touched only by signal handlers (serialised)
  std::atomic<bool> finished_{false};  // FinishShutdown ran
};

}  // namespace wasd::server

#endif  // WASD_SERVER_WEBHOOK_SERVER_H_
