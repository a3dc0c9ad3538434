// DelegatedAuthorizer: the gate in front of a secure /metrics. A request
// passes when its bearer token is one the API server knows (TokenReview) and
// that user may `get` the path (SubjectAccessReview, nonResourceURLs) — the
// RBAC a scraper needs is a ClusterRole with `get` on `/metrics`, as for
// kube-apiserver's own /metrics. Otherwise:
//   401  no bearer token, or one the API server does not authenticate
//   403  an authenticated user that RBAC does not allow (names the user)
//   503  the API server could not be asked (not cached: the next scrape asks
//        again)
//
// Answers are cached per (token digest, path): an allowed one for
// Options::allowed_ttl, a 401/403 for denied_ttl, so a scraper every 15 s
// costs two reviews a minute, not eight. The cache is bounded
// (max_entries); when full, expired entries go first, then all of them.
// Tokens are kept only as SHA-256 digests.
//
// Thread-safety: Check() may be called from several threads; it blocks on
// the API server while a review is under way (give the server its own
// thread: runtime::HttpServerThread).
#ifndef WASD_METRICSAUTH_AUTHORIZER_H_
#define WASD_METRICSAUTH_AUTHORIZER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"
#include "runtime/http_server.h"
#include "runtime/log.h"

namespace wasd::metricsauth {

// Posts a review object (TokenReview or SubjectAccessReview) and returns the
// server's answer. KubeReviewPoster (kube_review.h) does it on a kube::Client;
// tests give their own.
using ReviewPoster = std::function<base::Result<nlohmann::json>(const nlohmann::json& review)>;

class DelegatedAuthorizer {
 public:
  struct Options {
    std::chrono::seconds allowed_ttl{60};
    std::chrono::seconds denied_ttl{10};
    std::size_t max_entries = 1024;
  };
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  DelegatedAuthorizer(
      ReviewPoster post, const runtime::Logger& logger, Options options,
      Clock now = [] { return std::chrono::steady_clock::now(); });

  // nullopt: the request may go on to the handler. Otherwise the answer to
  // send. `target` is the request target (its query string is ignored).
  std::optional<runtime::HttpResponse> Check(std::string_view target,
                                             std::string_view authorization);

  // Reviews posted so far (TokenReviews and SubjectAccessReviews).
  std::uint64_t reviews_posted() const;

 private:
  struct Entry {
    std::optional<runtime::HttpResponse> answer;  // nullopt: allowed
    std::chrono::steady_clock::time_point expires;
  };
  // The decision, uncached. *cacheable false for 503s.
  std::optional<runtime::HttpResponse> Decide(std::string_view path, std::string_view token,
                                              bool* cacheable);
  base::Result<nlohmann::json> Post(const nlohmann::json& review);
  void Remember(const std::string& key, Entry entry);

  const ReviewPoster post_;
  const runtime::Logger& logger_;
  const Options options_;
  const Clock now_;
  mutable std::mutex mu_;  // guards cache_ and posted_
  std::unordered_map<std::string, Entry> cache_;
  std::uint64_t posted_ = 0;
};

}  // namespace wasd::metricsauth

#endif  // WASD_METRICSAUTH_AUTHORIZER_H_
