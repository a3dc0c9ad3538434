#include "metricsauth/authorizer.h"

#include <utility>

#include "certs/digest.h"
#include "metricsauth/review.h"

namespace wasd::metricsauth {
namespace {

runtime::HttpResponse Refuse(int status, std::string body) {
  runtime::HttpResponse r;
  r.status = status;
  r.body = std::move(body) + "\n";
  if (status == 401) r.www_authenticate = "Bearer realm=\"wasd metrics\"";
  return r;
}

std::string_view PathOf(std::string_view target) {
  const std::size_t q = target.find_first_of("?#");
  return q == std::string_view::npos ? target : target.substr(0, q);
}

}  // namespace

DelegatedAuthorizer::DelegatedAuthorizer(ReviewPoster post, const runtime::Logger& logger,
                                         Options options, Clock now)
    : post_(std::move(post)), logger_(logger), options_(options), now_(std::move(now)) {}

std::uint64_t DelegatedAuthorizer::reviews_posted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return posted_;
}

base::Result<nlohmann::json> DelegatedAuthorizer::Post(const nlohmann::json& review) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++posted_;
  }
  return post_(review);
}

std::optional<runtime::HttpResponse> DelegatedAuthorizer::Check(std::string_view target,
                                                                std::string_view authorization) {
  const std::string_view path = PathOf(target);
  const std::string_view token = BearerToken(authorization);
  if (token.empty()) {
    return Refuse(401,
                  "Unauthorized: /metrics needs a bearer token (Authorization: Bearer TOKEN) of a "
                  "user allowed to get " +
                      std::string(path));
  }
  const std::string key = certs::Sha256Hex(token) + " " + std::string(path);
  const auto now = now_();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) {
      if (it->second.expires > now) return it->second.answer;
      cache_.erase(it);
    }
  }
  bool cacheable = true;
  std::optional<runtime::HttpResponse> answer = Decide(path, token, &cacheable);
  if (cacheable) {
    const auto ttl = answer ? options_.denied_ttl : options_.allowed_ttl;
    Remember(key, Entry{answer, now + ttl});
  }
  return answer;
}

std::optional<runtime::HttpResponse> DelegatedAuthorizer::Decide(std::string_view path,
                                                                 std::string_view token,
                                                                 bool* cacheable) {
  base::Result<nlohmann::json> posted = Post(TokenReviewRequest(token));
  base::Result<TokenReviewAnswer> who =
      posted.ok() ? ParseTokenReview(posted.value()) : posted.status();
  if (!who.ok()) {
    *cacheable = false;
    logger_.Warn("cannot authenticate a /metrics request: TokenReview failed",
                 {{"error", who.status().message()}});
    return Refuse(503,
                  "cannot check the bearer token: TokenReview failed: " + who.status().message());
  }
  if (!who.value().authenticated) {
    logger_.Debug("/metrics request refused: token not authenticated",
                  {{"error", who.value().error}});
    return Refuse(401, "Unauthorized: the API server does not authenticate this bearer token" +
                           (who.value().error.empty() ? "" : " (" + who.value().error + ")"));
  }
  const UserInfo& user = who.value().user;
  posted = Post(SubjectAccessReviewRequest(user, path, "get"));
  base::Result<AccessAnswer> access =
      posted.ok() ? ParseSubjectAccessReview(posted.value()) : posted.status();
  if (!access.ok()) {
    *cacheable = false;
    logger_.Warn("cannot authorize a /metrics request: SubjectAccessReview failed",
                 {{"user", user.username}, {"error", access.status().message()}});
    return Refuse(503,
                  "cannot check access: SubjectAccessReview failed: " + access.status().message());
  }
  if (!access.value().allowed) {
    logger_.Debug("/metrics request refused: not allowed",
                  {{"user", user.username}, {"reason", access.value().reason}});
    std::string body = "Forbidden: user \"" + user.username + "\" may not get " +
                       std::string(path) + " (bind it to a ClusterRole with nonResourceURLs [\"" +
                       std::string(path) + "\"] and verbs [\"get\"]";
    if (!access.value().reason.empty()) body += "; " + access.value().reason;
    return Refuse(403, body + ")");
  }
  return std::nullopt;
}

void DelegatedAuthorizer::Remember(const std::string& key, Entry entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= options_.max_entries) {
    const auto now = now_();
    std::erase_if(cache_, [now](const auto& kv) { return kv.second.expires <= now; });
    if (cache_.size() >= options_.max_entries) cache_.clear();
  }
  cache_[key] = std::move(entry);
}

}  // namespace wasd::metricsauth
