#include "metricsauth/review.h"

#include <cctype>

namespace wasd::metricsauth {
namespace {

using base::Status;

bool StringList(const nlohmann::json& v) {
  if (!v.is_array()) return false;
  for (const nlohmann::json& s : v)
    if (!s.is_string()) return false;
  return true;
}

const nlohmann::json* StatusOf(const nlohmann::json& review, std::string_view kind) {
  if (!review.is_object() || review.value("kind", "") != kind) return nullptr;
  auto it = review.find("status");
  if (it == review.end() || !it->is_object()) return nullptr;
  return &*it;
}

}  // namespace

std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return {};
  }
  std::string_view token = authorization.substr(kScheme.size() + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

nlohmann::json TokenReviewRequest(std::string_view token) {
  return {{"apiVersion", "authentication.k8s.io/v1"},
          {"kind", "TokenReview"},
          {"spec", {{"token", std::string(token)}}}};
}

base::Result<TokenReviewAnswer> ParseTokenReview(const nlohmann::json& review) {
  const nlohmann::json* status = StatusOf(review, "TokenReview");
  if (status == nullptr) return Status::Error("the API server's answer is not a TokenReview");
  TokenReviewAnswer out;
  out.authenticated = status->value("authenticated", false);
  if (auto e = status->find("error"); e != status->end() && e->is_string()) out.error = *e;
  if (!out.authenticated) return out;
  auto user = status->find("user");
  if (user == status->end() || !user->is_object() || !user->value("username", "").size())
    return Status::Error("the API server's TokenReview names no user");
  out.user.username = user->value("username", "");
  out.user.uid = user->value("uid", "");
  if (auto g = user->find("groups"); g != user->end()) {
    if (!StringList(*g)) return Status::Error("the TokenReview's user.groups is not a string list");
    out.user.groups = g->get<std::vector<std::string>>();
  }
  if (auto x = user->find("extra"); x != user->end() && x->is_object()) {
    for (const auto& [key, values] : x->items()) {
      if (!StringList(values))
        return Status::Error("the TokenReview's user.extra." + key + " is not a string list");
    }
    out.user.extra = *x;
  }
  return out;
}

nlohmann::json SubjectAccessReviewRequest(const UserInfo& user, std::string_view path,
                                          std::string_view verb) {
  nlohmann::json spec = {
      {"user", user.username},
      {"groups", user.groups},
      {"nonResourceAttributes", {{"path", std::string(path)}, {"verb", std::string(verb)}}}};
  if (!user.uid.empty()) spec["uid"] = user.uid;
  if (user.extra.is_object() && !user.extra.empty()) spec["extra"] = user.extra;
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"spec", std::move(spec)}};
}

base::Result<AccessAnswer> ParseSubjectAccessReview(const nlohmann::json& review) {
  const nlohmann::json* status = StatusOf(review, "SubjectAccessReview");
  if (status == nullptr)
    return Status::Error("the API server's answer is not a SubjectAccessReview");
  AccessAnswer out;
  out.allowed = status->value("allowed", false);
  if (status->value("denied", false)) out.allowed = false;
  out.reason = status->value("reason", "");
  if (out.reason.empty()) out.reason = status->value("evaluationError", "");
  return out;
}

}  // namespace wasd::metricsauth
