// The two reviews a secure /metrics asks the API server for, as JSON in and
// out (no I/O here): a TokenReview (authentication.k8s.io/v1) to learn who
// holds a bearer token, then a SubjectAccessReview (authorization.k8s.io/v1)
// to learn whether that user may `get` the non-resource URL asked for. This
// is the delegated authentication and authorization of kube-apiserver's own
// aggregated servers and of controller-runtime's secure metrics.
//
// Plain values and free functions; thread-safe.
#ifndef WASD_METRICSAUTH_REVIEW_H_
#define WASD_METRICSAUTH_REVIEW_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace wasd::metricsauth {

// The user a TokenReview names, as a SubjectAccessReview takes it back.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  nlohmann::json extra = nlohmann::json::object();  // map of string lists
};

struct TokenReviewAnswer {
  bool authenticated = false;
  UserInfo user;      // when authenticated
  std::string error;  // status.error when not (may be empty)
};

struct AccessAnswer {
  bool allowed = false;
  std::string reason;  // status.reason (or evaluationError) as the server gave it
};

// The bearer token of an Authorization header ("Bearer <token>", the scheme
// case-insensitive, RFC 6750); empty when the header is absent, names
// another scheme or carries an empty token.
std::string_view BearerToken(std::string_view authorization);

nlohmann::json TokenReviewRequest(std::string_view token);
// The answer's status; fails when the object is not a TokenReview answer.
base::Result<TokenReviewAnswer> ParseTokenReview(const nlohmann::json& review);

// `verb` on the non-resource URL `path` (e.g. get /metrics) for `user`.
nlohmann::json SubjectAccessReviewRequest(const UserInfo& user, std::string_view path,
                                          std::string_view verb);
base::Result<AccessAnswer> ParseSubjectAccessReview(const nlohmann::json& review);

}  // namespace wasd::metricsauth

#endif  // WASD_METRICSAUTH_REVIEW_H_
