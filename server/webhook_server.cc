#include "server/webhook_server.h"

#include <sched.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "server/probes.h"

namespace wasd::server {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// --io-threads, by default one per CPU this process may run on: its
// affinity mask (taskset, cpusets of a container), not every CPU of the
// machine. More threads than CPUs only add context switches and lock
// handoffs.
int IoThreads(const WebhookConfig& config) {
  if (config.io_threads > 0) return config.io_threads;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

WebhookServer::WebhookServer(const WebhookConfig& config, const runtime::Logger& logger,
                             std::unique_ptr<DeploymentSource> deployments)
    : config_(config),
      logger_(logger),
      certs_(certs::ServingCertFiles{config.tls_cert_file, config.tls_key_file,
                                     config.client_ca_file}),
      deployments_(std::move(deployments)),
      ioc_(IoThreads(config)),
      lookup_pool_(static_cast<std::size_t>(config.lookup_workers)),
      lookup_budget_(config.max_pending_scale_lookups),
      signals_(ioc_, SIGINT, SIGTERM),
      reload_timer_(ioc_),
      api_timer_(ioc_),
      grace_timer_(ioc_) {
  env_.config = &config_;
  env_.review_options.pod_scheduling_gate = config_.pod_scheduling_gate;
  env_.review_options.pod_hold = config_.pod_hold;
  env_.review_options.in_tree_deployment_integration = config_.in_tree_deployment_integration;
  env_.review_options.denial_causes = config_.denial_causes;
  env_.review_options.backends = config_.backends;
  // The same answers with the Workload API served (native: scheduler hold).
  env_.review_options_served = env_.review_options;
  env_.review_options_served.native_api_served = true;
  env_.metrics = &metrics_;
  env_.logger = &logger_;
  env_.deployments = deployments_.get();
  env_.lookup_pool = &lookup_pool_;
  env_.lookup_budget = &lookup_budget_;
  env_.registry = &registry_;
  env_.state = &state_;
  env_.out_of_scope = &out_of_scope_;
}

WebhookServer::~WebhookServer() { registry_.ClearOnEmpty(); }

int WebhookServer::Run() {
  if (!Setup()) return 1;
  const auto cert = certs_.Current();
  logger_.Info(
      "webhook started",
      {{"address", runtime::HostPort(listener_->local_endpoint())},
       {"probes", probe_server_ ? runtime::HostPort(probe_server_->local_endpoint()) : "off"},
       {"metrics", MetricsText()},
       {"certificateSerial", cert->serial_hex()},
       {"certificateSubject", cert->subject()},
       {"certificateNotAfter", cert->not_after_unix()},
       {"clientCa", !config_.client_ca_file.empty()},
       {"ioThreads", IoThreads(config_)},
       {"maxRequestBytes", config_.max_request_bytes},
       {"podSchedulingGate", config_.pod_scheduling_gate},
       {"podHold", config_.pod_hold.Text()},
       {"inTreeDeploymentIntegration", config_.in_tree_deployment_integration},
       {"maxPendingScaleLookups", config_.max_pending_scale_lookups},
       {"backend", std::string(workloadbuilder::BackendName(config_.backends.backend))},
       {"allowedBackends", Join(config_.backends.AllowedNames())}});

  std::vector<std::thread> threads;
  for (int i = 1; i < IoThreads(config_); ++i) threads.emplace_back([this] { RunIoThread(); });
  RunIoThread();
  for (std::thread& t : threads) t.join();
  lookup_pool_.join();
  secure_metrics_.Stop();
  registry_.ClearOnEmpty();
  logger_.Info("webhook stopped", {{"connectionsLeft", registry_.size()}});
  return 0;
}

void WebhookServer::RunIoThread() {
  for (;;) {
    try {
      ioc_.run();
      return;
    } catch (const std::exception& e) {
      logger_.Error("unexpected exception in an I/O thread", {{"error", e.what()}});
    } catch (...) {
      logger_.Error("unexpected exception in an I/O thread", {{"error", "unknown"}});
    }
  }
}

bool WebhookServer::Setup() {
  if (base::Status loaded = certs_.LoadInitial(); !loaded.ok()) {
    logger_.Error("cannot load the serving certificate", {{"error", loaded.message()}});
    return false;
  }
  metrics_.SetCertificateExpiry(certs_.Current()->not_after_unix());
  state_.cert_loaded.store(true);

  listener_ = std::make_shared<TlsListener>(ioc_, certs_, env_);
  base::Result<tcp::endpoint> endpoint = runtime::MakeEndpoint(config_.bind_address, config_.port);
  base::Status opened = endpoint.ok() ? listener_->Open(*endpoint) : endpoint.status();
  if (!opened.ok()) {
    logger_.Error("cannot start the webhook", {{"error", opened.message()}});
    return false;
  }
  if (!OpenPlainServers()) return false;
  listener_->Start();
  if (probe_server_) probe_server_->Start();
  if (metrics_server_) metrics_server_->Start();
  WaitForSignal();
  ScheduleReload();
  ScheduleApiCheck(std::chrono::milliseconds(0));
  return true;
}

bool WebhookServer::OpenPlainServers() {
  const ListenAddress& probes = config_.health_probe_address;
  const ListenAddress& metrics = config_.metrics_address;
  const bool shared = probes.enabled && metrics.enabled && probes.host == metrics.host &&
                      probes.port == metrics.port && probes.port != 0;
  const runtime::HttpServer::Limits limits{config_.read_timeout, config_.write_timeout};
  auto make = [&](const ListenAddress& where, const char* name, bool serve_probes,
                  bool serve_metrics, std::shared_ptr<runtime::HttpServer>* out) {
    base::Result<tcp::endpoint> endpoint = runtime::MakeEndpoint(where.host, where.port);
    if (!endpoint.ok()) {
      logger_.Error("cannot start the webhook", {{"error", endpoint.status().message()}});
      return false;
    }
    auto handler = [this, serve_probes, serve_metrics](boost::beast::http::verb method,
                                                       std::string_view target) {
      return AnswerPlainRequest(method, target, serve_probes, serve_metrics, state_, metrics_);
    };
    *out = std::make_shared<runtime::HttpServer>(ioc_, name, handler, logger_, limits);
    if (base::Status s = (*out)->Open(*endpoint); !s.ok()) {
      logger_.Error("cannot start the webhook", {{"error", s.message()}});
      return false;
    }
    return true;
  };
  if (metrics.enabled && config_.metrics_security.secure()) {
    // HTTPS with the auth gate, which blocks on the API server: a thread of
    // its own, never the admission threads. Never shared with the probes
    // (cmd/ refuses the same address).
    auto handler = [this](boost::beast::http::verb method, std::string_view target) {
      return AnswerPlainRequest(method, target, false, true, state_, metrics_);
    };
    if (base::Status s = secure_metrics_.Start(metrics, "metrics", handler, logger_, limits,
                                               config_.metrics_security);
        !s.ok()) {
      logger_.Error("cannot start the webhook", {{"error", s.message()}});
      return false;
    }
    return !probes.enabled || make(probes, "probes", true, false, &probe_server_);
  }
  if (shared) return make(probes, "probes+metrics", true, true, &probe_server_);
  if (probes.enabled && !make(probes, "probes", true, false, &probe_server_)) return false;
  if (metrics.enabled && !make(metrics, "metrics", false, true, &metrics_server_)) return false;
  return true;
}

std::string WebhookServer::MetricsText() const {
  if (secure_metrics_.port() != 0)
    return "https://" + config_.metrics_address.host + ":" + std::to_string(secure_metrics_.port());
  if (metrics_server_) return runtime::HostPort(metrics_server_->local_endpoint());
  return probe_server_ && config_.metrics_address.enabled ? "with probes" : "off";
}

void WebhookServer::WaitForSignal() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal_number) {
    if (!ec) BeginShutdown(signal_number);
  });
}

void WebhookServer::BeginShutdown(int signal_number) {
  if (shutting_down_) {
    logger_.Warn("second signal: exiting without waiting",
                 {{"signal", signal_number}, {"connections", registry_.size()}});
    FinishShutdown("second signal");
    return;
  }
  shutting_down_ = true;
  state_.draining.store(true);  // readiness off before anything else
  logger_.Info("shutting down", {{"signal", signal_number},
                                 {"connections", registry_.size()},
                                 {"inFlightRequests", metrics_.in_flight()},
                                 {"shutdownDelayMs", config_.shutdown_delay.count()},
                                 {"gracePeriodMs", config_.shutdown_grace_period.count()}});
  WaitForSignal();  // a second signal exits at once, also during the delay
  if (config_.shutdown_delay.count() == 0) {
    StopAccepting();
    return;
  }
  // Endpoints still route new connections here for a while: keep accepting
  // and answering them (each answer says Connection: close) until they stop.
  grace_timer_.expires_after(config_.shutdown_delay);
  grace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !finished_.load()) StopAccepting();
  });
}

void WebhookServer::StopAccepting() {
  logger_.Info("closing the admission port",
               {{"connections", registry_.size()}, {"inFlightRequests", metrics_.in_flight()}});
  listener_->Stop();
  grace_timer_.expires_after(config_.shutdown_grace_period);
  grace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) FinishShutdown("grace period over");
  });
  registry_.DrainAll([this] { net::post(ioc_, [this] { FinishShutdown("drained"); }); });
}

void WebhookServer::FinishShutdown(const char* why) {
  if (finished_.exchange(true)) return;
  const std::size_t left = registry_.size();
  if (left > 0) {
    logger_.Warn("closing connections still open", {{"reason", why}, {"connections", left}});
  } else {
    logger_.Info("all connections closed", {{"reason", why}});
  }
  ioc_.stop();
}

void WebhookServer::ScheduleReload() {
  if (state_.draining.load()) return;
  reload_timer_.expires_after(config_.cert_reload_interval);
  reload_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || state_.draining.load()) return;
    // stat(2) and, on a change, PEM parsing: file I/O, so off the I/O threads.
    net::post(lookup_pool_, [this] { PollCertificate(); });
  });
}

void WebhookServer::ScheduleApiCheck(std::chrono::milliseconds delay) {
  if (state_.draining.load()) return;
  api_timer_.expires_after(delay);
  api_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || state_.draining.load()) return;
    net::post(lookup_pool_, [this] { CheckSchedulingApi(); });
  });
}

void WebhookServer::CheckSchedulingApi() {
  kube::SchedulingDiscovery d;
  try {
    d = deployments_->DiscoverScheduling();
  } catch (const std::exception& e) {
    d = {};
    d.error = base::Status::Error(e.what());
  }
  // Unknown is the gate: only a successful answer that lists both kinds
  // gives native pods the scheduler hold.
  const bool served = d.ok() && d.api.served();
  state_.native_api_served.store(served);
  const bool first = !state_.api_checked.exchange(true);
  std::string described = kube::DescribeDiscovery(d);
  if (first || described != last_api_) {
    const char* what = served ? "scheduling.k8s.io Workloads and PodGroups are served: native pods "
                                "are held by their scheduler (--pod-hold)"
                              : "scheduling.k8s.io Workloads and PodGroups are not known to be "
                                "served: native pods get the gate wasd.io/pod-group";
    if (served || d.ok()) {
      logger_.Info(what, {{"schedulingApi", described}});
    } else {
      logger_.Warn(what, {{"schedulingApi", described}});
    }
    last_api_ = std::move(described);
  }
  net::post(ioc_, [this] { ScheduleApiCheck(config_.api_check_interval); });
}

void WebhookServer::PollCertificate() {
  try {
    base::Status error;
    switch (certs_.Poll(&error)) {
      case certs::ServingCertReloader::PollResult::kUnchanged: break;
      case certs::ServingCertReloader::PollResult::kReloaded: {
        const auto cert = certs_.Current();
        metrics_.SetCertificateExpiry(cert->not_after_unix());
        logger_.Info("serving certificate reloaded",
                     {{"certificateSerial", cert->serial_hex()},
                      {"certificateSubject", cert->subject()},
                      {"certificateNotAfter", cert->not_after_unix()}});
        break;
      }
      case certs::ServingCertReloader::PollResult::kRejected:
        logger_.Error(
            "new serving certificate rejected; keeping the one in use",
            {{"error", error.message()}, {"certificateSerial", certs_.Current()->serial_hex()}});
        break;
    }
  } catch (const std::exception& e) {
    logger_.Error("certificate reload failed", {{"error", e.what()}});
  }
  net::post(ioc_, [this] { ScheduleReload(); });
}

}  // namespace wasd::server
