// WebhookConfig: every setting of `wasd webhook` in one struct (DESIGN
// "Command line"; cmd/flags.cc fills it from the flags). All limits and
// deadlines live here, each with the reason for its default.
//
// Plain values; thread-safe as any const value.
#ifndef WASD_SERVER_WEBHOOK_CONFIG_H_
#define WASD_SERVER_WEBHOOK_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "admission/options.h"
#include "kube/config.h"
#include "runtime/http_server.h"
#include "runtime/listen.h"
#include "runtime/log.h"
#include "workloadbuilder/backend_compile.h"

namespace wasd::server {

using runtime::ListenAddress;

struct WebhookConfig {
  std::string tls_cert_file;   // required
  std::string tls_key_file;    // required
  std::string client_ca_file;  // optional: require client certificates signed by it
  // API server access for deployments/scale lookups: --kubeconfig (else
  // $KUBECONFIG, in-cluster, ~/.kube/config) and --context/--cluster/--user.
  std::string kubeconfig;
  kube::KubeconfigSelection kube_selection;

  std::string bind_address = "0.0.0.0";
  std::uint16_t port = 9443;
  ListenAddress health_probe_address{"0.0.0.0", 8081, true};
  ListenAddress metrics_address{"0.0.0.0", 8443, true};
  runtime::MetricsServing metrics_serving;
  // Filled by cmd/ when metrics_serving.secure: TLS and the auth gate; the
  // metrics server then runs on a thread of its own.
  runtime::HttpSecurity metrics_security;

  // Largest admission request body accepted. An AdmissionReview carries the
  // object and the old object (etcd stores up to 1.5 MiB each, the API
  // server accepts 3 MiB request bodies) plus the envelope: 7 MiB holds two
  // maximal objects with room to spare; anything bigger is not a review.
  std::uint64_t max_request_bytes = std::uint64_t{7} * 1024 * 1024;
  bool pod_scheduling_gate = true;
  // admission::Options::pod_hold (--pod-hold): per backend, whether the
  // scheduler or wasd's gate holds a new pod until its group exists (Q23).
  admission::PodHolds pod_hold;
  // --api-check-interval: how often the webhook asks which scheduling.k8s.io
  // version serves Workloads and PodGroups (a native pod gets the scheduler
  // hold only while they are served). At most 30 s: a cluster that turns
  // GenericWorkload off gets gated pods within one interval.
  std::chrono::milliseconds api_check_interval{std::chrono::seconds(15)};
  // admission::Options::in_tree_deployment_integration
  // (--in-tree-deployment-integration).
  bool in_tree_deployment_integration = false;
  // --backend, --allowed-backends and the cluster facts (admission::Options::backends).
  workloadbuilder::BackendSettings backends;
  // admission::Options::denial_causes (--denial-causes).
  bool denial_causes = true;

  // TLS handshake: a loaded API server finishes within milliseconds; 10 s
  // drops connections that never speak TLS without hurting slow networks.
  std::chrono::milliseconds handshake_timeout{10'000};
  // Whole request (headers + body), the first one on a connection included.
  // The API server's webhook timeout is at most 30 s, so a request slower
  // than that has already failed on the client side.
  std::chrono::milliseconds read_timeout{30'000};
  // Writing one response.
  std::chrono::milliseconds write_timeout{30'000};
  // Keep-alive between requests: longer than the API server's 90 s client
  // idle timeout, so the server never closes a connection the client is about
  // to reuse (that POST would fail as EOF and is not retried).
  std::chrono::milliseconds idle_timeout{120'000};
  // SIGTERM: longest wait for requests in progress before exiting anyway;
  // matches the pod's default terminationGracePeriodSeconds.
  std::chrono::milliseconds shutdown_grace_period{30'000};
  // SIGTERM: readiness turns off at once, but the admission port keeps
  // accepting and answering for this long before it closes, because
  // kube-proxy and the API server's endpoint routing keep sending new
  // connections to a terminating pod until the EndpointSlice change has
  // reached them (hundreds of ms to a few seconds); a refused connection is
  // not retried by kube-apiserver. 0 = close at once.
  std::chrono::milliseconds shutdown_delay{5'000};
  // How often the certificate files are checked for a change. cert-manager
  // and kubelet secret updates land within seconds; a stat(2) every 2 s is
  // free.
  std::chrono::milliseconds cert_reload_interval{2'000};
  // Deadline of one deployments/scale lookup against the API server: well
  // inside the webhook's own 10 s timeout so the review is answered (503)
  // rather than timing out.
  std::chrono::milliseconds lookup_timeout{2'000};

  // I/O threads; 0 = one per hardware thread.
  int io_threads = 0;
  // Threads for blocking Deployment lookups (scale requests only, which are
  // rare: kubectl scale and HPA). 4 lets a few run concurrently against a
  // slow API server without starving anything.
  int lookup_workers = 4;
  // Most deployments/scale lookups queued or running at once; beyond it a
  // scale review is answered 503 at once (server/scale_lookup_budget.h).
  // Scale writes are rare (kubectl scale, an HPA changing its mind): 64 is
  // far above their rate times the 2 s lookup timeout, and small enough
  // that a flood cannot queue reviews past the API server's timeout (64
  // lookups / 4 workers x 2 s = 32 s at worst against an API server that
  // answers none, and each is dropped once its own deadline passed).
  int max_pending_scale_lookups = 64;

  runtime::LogOptions log;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_WEBHOOK_CONFIG_H_
