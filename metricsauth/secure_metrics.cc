#include "metricsauth/secure_metrics.h"

#include <unistd.h>

#include <utility>

#include "certs/issuer.h"
#include "kube/resource.h"

namespace wasd::metricsauth {
namespace {

constexpr std::chrono::seconds kCertPollInterval{10};

// A CA and a leaf for localhost, 127.0.0.1 and the host name, in memory:
// what a scraper that skips verification needs, and nothing on disk.
base::Result<std::shared_ptr<const certs::ServingCert>> SelfSigned() {
  certs::CertKeyPem ca, leaf;
  certs::CaOptions ca_options;
  ca_options.common_name = "wasd-metrics-self-signed-ca";
  ca_options.days = 365;
  ca_options.now = std::chrono::system_clock::now();
  if (base::Status s = certs::IssueCa(ca_options, &ca); !s.ok()) return s;
  certs::LeafOptions leaf_options;
  leaf_options.common_name = "wasd-metrics";
  leaf_options.dns_names = {"localhost"};
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0 && certs::IsValidDnsName(host) &&
      std::string_view(host) != "localhost")
    leaf_options.dns_names.emplace_back(host);
  leaf_options.ip_addresses = {"127.0.0.1", "::1"};
  leaf_options.days = 365;
  leaf_options.now = ca_options.now;
  if (base::Status s = certs::IssueLeaf(ca, leaf_options, &leaf); !s.ok()) return s;
  certs::ServingCertPem pem;
  pem.cert_name = "self-signed metrics certificate";
  pem.cert_pem = leaf.cert_pem + ca.cert_pem;
  pem.key_name = "self-signed metrics key";
  pem.key_pem = leaf.key_pem;
  return certs::ServingCertFromPem(pem);
}

}  // namespace

ReviewPoster KubeReviewPoster(kube::Client& client, std::chrono::milliseconds timeout) {
  return [&client, timeout](const nlohmann::json& review) -> base::Result<nlohmann::json> {
    const bool token = review.value("kind", "") == "TokenReview";
    const kube::Resource resource =
        token ? kube::Resource("authentication.k8s.io/v1", "tokenreviews", false)
              : kube::Resource("authorization.k8s.io/v1", "subjectaccessreviews", false);
    kube::RequestOptions options;
    options.timeout = timeout;
    return client.Create(resource, "", review, options);
  };
}

namespace {

// Without API access: every review fails with the reason.
ReviewPoster NoApiPoster(const base::Status& why) {
  const std::string reason = "no Kubernetes API access: " + why.message();
  return [reason](const nlohmann::json&) -> base::Result<nlohmann::json> {
    return base::Status::Error(reason);
  };
}

}  // namespace

SecureMetrics::SecureMetrics(const SecureMetricsOptions& options,
                             const base::Result<kube::Config>& api, const runtime::Logger& logger)
    : options_(options),
      logger_(logger),
      client_(api.ok() ? std::make_unique<kube::Client>(api.value()) : nullptr),
      authorizer_(
          client_ ? KubeReviewPoster(*client_, options.review_timeout) : NoApiPoster(api.status()),
          logger, options.auth) {}

base::Result<std::unique_ptr<SecureMetrics>> SecureMetrics::Make(
    const SecureMetricsOptions& options, const base::Result<kube::Config>& api,
    const runtime::Logger& logger) {
  if (options.cert_file.empty() != options.key_file.empty())
    return base::Status::Error(
        "--metrics-cert-file and --metrics-key-file go together: give both or neither");
  std::unique_ptr<SecureMetrics> m(new SecureMetrics(options, api, logger));
  if (options.cert_file.empty()) {
    base::Result<std::shared_ptr<const certs::ServingCert>> made = SelfSigned();
    if (!made.ok())
      return base::Status::Error("cannot make a self-signed metrics certificate: " +
                                 made.status().message());
    m->cert_ = std::move(made).value();
    m->cert_source_ = "self-signed in memory";
  } else {
    m->reloader_ = std::make_unique<certs::ServingCertReloader>(
        certs::ServingCertFiles{options.cert_file, options.key_file, ""});
    if (base::Status s = m->reloader_->LoadInitial(); !s.ok())
      return base::Status::Error("cannot load the metrics certificate: " + s.message());
    m->cert_ = m->reloader_->Current();
    m->cert_source_ = options.cert_file;
  }
  m->next_poll_ = std::chrono::steady_clock::now() + kCertPollInterval;
  return m;
}

std::shared_ptr<boost::asio::ssl::context> SecureMetrics::Context() {
  std::lock_guard<std::mutex> lock(mu_);
  if (reloader_) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_poll_) {
      next_poll_ = now + kCertPollInterval;
      base::Status why;
      switch (reloader_->Poll(&why)) {
        case certs::ServingCertReloader::PollResult::kReloaded:
          logger_.Info("metrics certificate reloaded", {{"certFile", options_.cert_file}});
          break;
        case certs::ServingCertReloader::PollResult::kRejected:
          logger_.Warn("new metrics certificate refused; the previous one stays",
                       {{"certFile", options_.cert_file}, {"error", why.message()}});
          break;
        case certs::ServingCertReloader::PollResult::kUnchanged: break;
      }
      cert_ = reloader_->Current();
      if (context_ && cert_ && context_->native_handle() != cert_->ssl_ctx()) context_.reset();
    }
  }
  if (!context_ && cert_) {
    // The Asio context takes ownership of one reference to the SSL_CTX.
    SSL_CTX_up_ref(cert_->ssl_ctx());
    context_ = std::make_shared<boost::asio::ssl::context>(cert_->ssl_ctx());
  }
  return context_;
}

runtime::HttpSecurity SecureMetrics::Security() {
  runtime::HttpSecurity s;
  s.tls = [this] { return Context(); };
  s.gate = [this](std::string_view target, std::string_view authorization) {
    return authorizer_.Check(target, authorization);
  };
  return s;
}

}  // namespace wasd::metricsauth
