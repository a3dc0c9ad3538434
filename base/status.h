// Status and Result<T>: what every fallible operation in wasd returns
// instead of throwing — Kubernetes API calls, certificate and file work,
// flag parsing, listeners. A Status says which of a closed set of outcomes happened — OK, an
// HTTP error answered by the API server (with the HTTP code and the
// metav1.Status reason and message), or a failure before any answer arrived
// (unreachable, timed out, TLS verification failed), a response we refused to
// accept (too large, not JSON), a bad argument, a cancelled call, or any
// other failure described by one human-readable line (kFailed).
//
// The webhook only needs three answers — found, not found, unreachable with a
// reason — and gets them as `ok()`, `not_found()` and `unreachable()` +
// `message()`.
//
// Plain values; thread-safe as any const value.
#ifndef WASD_BASE_STATUS_H_
#define WASD_BASE_STATUS_H_

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace wasd::base {

class Status {
 public:
  enum class Kind {
    kOk,
    kHttp,             // the server answered with a non-2xx code: see http_code()
    kUnreachable,      // DNS, connect, TLS handshake or connection lost before an answer
    kTimeout,          // a connect/handshake/read/write deadline passed
    kTlsVerify,        // the server certificate did not verify against the CA
    kBadResponse,      // an answer we refused: over a size limit, malformed JSON or watch line
    kInvalidArgument,  // the caller's input was unusable (bad config, bad server URL, …)
    kCancelled,        // the caller asked to stop (stop_token)
    kFailed,           // anything else: message() is the whole story (a file, a key, a flag)
  };

  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // An HTTP error; `reason` is the metav1.Status reason ("NotFound",
  // "Conflict", "Expired", …) or empty when the body carried none.
  static Status Http(int http_code, std::string reason, std::string message,
                     std::optional<std::chrono::seconds> retry_after = std::nullopt);
  static Status Error(Kind kind, std::string message);
  // kFailed: one line saying what went wrong (no trailing newline).
  static Status Error(std::string message) { return Error(Kind::kFailed, std::move(message)); }
  // Builds the Status an API server error body describes (a metav1.Status
  // object, e.g. the object of a watch ERROR event). Falls back to `http_code`
  // when the object has no `code`.
  static Status FromStatusObject(const nlohmann::json& status, int http_code = 0);

  bool ok() const { return kind_ == Kind::kOk; }
  Kind kind() const { return kind_; }
  int http_code() const { return http_code_; }  // 0 unless kind() == kHttp
  const std::string& reason() const { return reason_; }
  const std::string& message() const { return message_; }
  // The server's Retry-After (429, some 5xx), when it sent one.
  std::optional<std::chrono::seconds> retry_after() const { return retry_after_; }

  bool not_found() const { return http_code_ == 404; }
  bool conflict() const { return http_code_ == 409; }  // also AlreadyExists
  bool already_exists() const { return http_code_ == 409 && reason_ == "AlreadyExists"; }
  // 410 Gone / reason Expired: the resourceVersion is too old; relist.
  bool gone() const { return http_code_ == 410 || reason_ == "Expired" || reason_ == "Gone"; }
  bool too_many_requests() const { return http_code_ == 429; }
  bool server_error() const { return http_code_ >= 500 && http_code_ <= 599; }
  // No answer from the API server at all: unreachable, timed out, or the
  // server's certificate did not verify. message() says which and why.
  bool unreachable() const {
    return kind_ == Kind::kUnreachable || kind_ == Kind::kTimeout || kind_ == Kind::kTlsVerify;
  }
  bool timed_out() const { return kind_ == Kind::kTimeout; }
  bool cancelled() const { return kind_ == Kind::kCancelled; }

  // One line for logs: "OK", "404 NotFound: deployments.apps \"x\" not found",
  // "unreachable: connect 127.0.0.1:6443: Connection refused", …
  std::string ToString() const;

 private:
  Kind kind_ = Kind::kOk;
  int http_code_ = 0;
  std::string reason_;
  std::string message_;
  std::optional<std::chrono::seconds> retry_after_;
};

// A value or the Status that explains its absence. `value()` is only
// meaningful when ok().
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit on purpose

  bool ok() const { return status_.ok() && value_.has_value(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace wasd::base

#endif  // WASD_BASE_STATUS_H_
