// Client::Impl: the state behind Client — TLS context, connection pool,
// token cache — and the request/retry machinery shared by client.cc (plain
// calls) and client_watch.cc (watches). Internal to kube/.
//
// Thread-safe: the pool and token cache are guarded by mu_; everything else
// is immutable after construction.
#ifndef WASD_KUBE_CLIENT_IMPL_H_
#define WASD_KUBE_CLIENT_IMPL_H_

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/connection.h"
#include "kube/exec_credential.h"
#include "kube/rate_limiter.h"

namespace wasd::kube {

// An idle pooled connection older than this is closed instead of reused:
// load balancers and proxies in front of API servers drop idle TCP flows
// after 60 s or more, so 30 s keeps reuse safe without the retry guesswork a
// silently dropped connection would need.
inline constexpr std::chrono::seconds kMaxIdleAge{30};

struct HttpResponse {
  int code = 0;
  std::string body;
  std::string retry_after;  // raw header value
};

class Client::Impl {
 public:
  explicit Impl(Config config);

  const Config& config() const { return config_; }

  // One request, all retries included; decodes a 2xx JSON body (keeping
  // only the members of `projection`, when given) or maps the error answer
  // to a Status. Every attempt first takes a token of the rate limiter.
  Result<nlohmann::json> Call(http::verb verb, const std::string& path, const Query& query,
                              const std::string& body, std::string_view content_type,
                              const RequestOptions& options,
                              const base::JsonProjection* projection = nullptr);

  // A new connection, connected and handshaken by `deadline`.
  Result<std::unique_ptr<Connection>> Open(Clock::time_point deadline, const std::stop_token& stop);

  // Fails only when an exec credential plugin cannot give a token.
  Result<http::request<http::string_body>> MakeRequest(http::verb verb, const std::string& target,
                                                       const std::string& body,
                                                       std::string_view content_type);
  // The server answered 401: a token from an exec plugin is fetched anew.
  void Unauthorized();
  // base_path + path + query string.
  std::string Target(const std::string& path, const Query& query) const;

  const Status& setup_error() const { return setup_error_; }

  // Waits for a token of the rate limiter (--kube-api-qps). Fails with
  // kTimeout when none is due before `deadline` (the call would time out
  // waiting), kCancelled when `stop` is requested.
  Status Throttle(Clock::time_point deadline, const std::stop_token& stop,
                  const std::string& target);

 private:
  struct Attempt {
    Status status;  // transport outcome
    HttpResponse response;
    bool never_sent = false;  // connect/handshake failed: safe to retry any verb
  };
  Attempt Exchange(http::verb verb, const std::string& target, const std::string& body,
                   std::string_view content_type, Clock::time_point deadline,
                   const std::stop_token& stop);
  std::unique_ptr<Connection> TakeIdle();
  void Release(std::unique_ptr<Connection> conn);
  Result<std::string> CurrentToken();

  Config config_;
  TokenBucket rate_limit_;
  Status setup_error_;
  ServerUrl url_;
  std::string verify_name_;
  std::unique_ptr<boost::asio::ssl::context> tls_ctx_;
  std::unique_ptr<ExecTokenSource> exec_;  // kubeconfig exec plugin, if any

  std::mutex mu_;
  struct Idle {
    std::unique_ptr<Connection> conn;
    Clock::time_point since;
  };
  std::vector<Idle> idle_;  // guarded by mu_
  std::string token_;       // guarded by mu_: last good token
};

// Maps a non-2xx answer to a Status (metav1.Status body when there is one).
Status ErrorFromResponse(const HttpResponse& response, std::chrono::seconds max_retry_after);

}  // namespace wasd::kube

#endif  // WASD_KUBE_CLIENT_IMPL_H_
