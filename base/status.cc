#include "base/status.h"

#include <string>

namespace wasd::base {

Status Status::Http(int http_code, std::string reason, std::string message,
                    std::optional<std::chrono::seconds> retry_after) {
  Status s;
  s.kind_ = Kind::kHttp;
  s.http_code_ = http_code;
  s.reason_ = std::move(reason);
  s.message_ = std::move(message);
  s.retry_after_ = retry_after;
  return s;
}

Status Status::Error(Kind kind, std::string message) {
  Status s;
  s.kind_ = kind;
  s.message_ = std::move(message);
  return s;
}

Status Status::FromStatusObject(const nlohmann::json& status, int http_code) {
  int code = http_code;
  std::string reason;
  std::string message;
  if (status.is_object()) {
    auto it = status.find("code");
    if (it != status.end() && it->is_number_integer()) code = it->get<int>();
    it = status.find("reason");
    if (it != status.end() && it->is_string()) reason = it->get<std::string>();
    it = status.find("message");
    if (it != status.end() && it->is_string()) message = it->get<std::string>();
  }
  if (code == 0) code = 500;  // an error Status without a code: treat as a server error
  return Http(code, std::move(reason), std::move(message));
}

std::string Status::ToString() const {
  switch (kind_) {
    case Kind::kOk: return "OK";
    case Kind::kHttp: {
      std::string s = std::to_string(http_code_);
      if (!reason_.empty()) s += " " + reason_;
      if (!message_.empty()) s += ": " + message_;
      return s;
    }
    case Kind::kUnreachable: return "unreachable: " + message_;
    case Kind::kTimeout: return "timed out: " + message_;
    case Kind::kTlsVerify: return "TLS verification failed: " + message_;
    case Kind::kBadResponse: return "bad response: " + message_;
    case Kind::kInvalidArgument: return "invalid argument: " + message_;
    case Kind::kCancelled: return "cancelled: " + message_;
    case Kind::kFailed: return message_;
  }
  return message_;
}

}  // namespace wasd::base
