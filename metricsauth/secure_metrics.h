// SecureMetrics: what makes a daemon's /metrics HTTPS with authentication
// and authorization (--metrics-secure, the default), as kube-apiserver's
// components and controller-runtime's secure metrics serve theirs:
//   * TLS from --metrics-cert-file/--metrics-key-file, re-read when the files
//     change (checked at most every 10 s, on a new connection), or, when none
//     are given, a self-signed pair made in memory at start (a scraper then
//     skips verification or is given the files);
//   * the DelegatedAuthorizer's gate: TokenReview + SubjectAccessReview
//     through the daemon's own API server credentials.
// Plain HTTP (--metrics-secure=false) needs none of this.
//
// Thread-safety: Security()'s functions may be called from several threads;
// the object must outlive the server that uses them.
#ifndef WASD_METRICSAUTH_SECURE_METRICS_H_
#define WASD_METRICSAUTH_SECURE_METRICS_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "certs/serving_cert.h"
#include "kube/client.h"
#include "kube/config.h"
#include "metricsauth/authorizer.h"
#include "runtime/http_server.h"
#include "runtime/log.h"

namespace wasd::metricsauth {

struct SecureMetricsOptions {
  std::string cert_file;  // both empty: self-signed in memory
  std::string key_file;
  DelegatedAuthorizer::Options auth;
  // Deadline of one review call (both reviews of a scrape share a scrape's
  // 10 s Prometheus timeout).
  std::chrono::milliseconds review_timeout{4'000};
};

class SecureMetrics {
 public:
  // Loads (or makes) the certificate; fails naming the file and the reason.
  // `api` is the daemon's API server configuration; when it did not load,
  // every request is answered 503 with its reason (the webhook runs without
  // API access; a scraper learns why it gets nothing).
  static base::Result<std::unique_ptr<SecureMetrics>> Make(const SecureMetricsOptions& options,
                                                           const base::Result<kube::Config>& api,
                                                           const runtime::Logger& logger);

  runtime::HttpSecurity Security();
  // What the log line at start says about the certificate.
  const std::string& certificate_source() const { return cert_source_; }
  DelegatedAuthorizer& authorizer() { return authorizer_; }

 private:
  SecureMetrics(const SecureMetricsOptions& options, const base::Result<kube::Config>& api,
                const runtime::Logger& logger);
  std::shared_ptr<boost::asio::ssl::context> Context();

  const SecureMetricsOptions options_;
  const runtime::Logger& logger_;
  std::unique_ptr<kube::Client> client_;  // null without API access
  DelegatedAuthorizer authorizer_;
  std::string cert_source_;
  std::unique_ptr<certs::ServingCertReloader> reloader_;  // null: self-signed
  std::mutex mu_;                                         // guards everything below
  std::shared_ptr<const certs::ServingCert> cert_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::chrono::steady_clock::time_point next_poll_{};
};

// Posts TokenReviews and SubjectAccessReviews on `client`.
ReviewPoster KubeReviewPoster(kube::Client& client, std::chrono::milliseconds timeout);

}  // namespace wasd::metricsauth

#endif  // WASD_METRICSAUTH_SECURE_METRICS_H_
