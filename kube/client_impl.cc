#include "kube/client_impl.h"

#include <cstdio>

#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>

#include "kube/backoff.h"
#include "runtime/file_util.h"

namespace wasd::kube {

namespace asio = boost::asio;

namespace {

// Token files hold one JWT (~1 KiB).
constexpr std::size_t kMaxTokenBytes = std::size_t{64} * 1024;
// How much of a non-JSON error body goes into a Status message.
constexpr std::size_t kMaxErrorSnippet = 256;

Status Invalid(std::string why) {
  return Status::Error(Status::Kind::kInvalidArgument, std::move(why));
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

Client::Impl::Impl(Config config)
    : config_(std::move(config)),
      rate_limit_(config_.rate_limit.qps, config_.rate_limit.burst),
      token_(config_.token) {
  if (config_.exec)
    exec_ = std::make_unique<ExecTokenSource>(*config_.exec, config_.server, config_.ca_pem);
  Result<ServerUrl> url = ParseServerUrl(config_.server);
  if (!url.ok()) {
    setup_error_ = url.status();
    return;
  }
  url_ = url.value();
  verify_name_ = config_.tls_server_name.empty() ? url_.host : config_.tls_server_name;
  if (!url_.tls) return;
  try {
    tls_ctx_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(tls_ctx_->native_handle(), TLS1_2_VERSION);
    if (!config_.ca_pem.empty()) {
      tls_ctx_->add_certificate_authority(asio::buffer(config_.ca_pem));
    } else {
      tls_ctx_->set_default_verify_paths();
    }
    if (!config_.client_cert_pem.empty()) {
      tls_ctx_->use_certificate_chain(asio::buffer(config_.client_cert_pem));
      tls_ctx_->use_private_key(asio::buffer(config_.client_key_pem), asio::ssl::context::pem);
    }
  } catch (const boost::system::system_error& e) {
    setup_error_ = Invalid("TLS setup for " + config_.server + " (" + config_.source +
                           "): " + e.code().message());
    tls_ctx_.reset();
  }
}

Result<std::string> Client::Impl::CurrentToken() {
  if (exec_) return exec_->Token();
  if (!config_.token_file.empty()) {
    // Re-read on every request: kubelet rotates projected service-account
    // tokens in place, and a stale token fails with 401.
    Result<std::string> fresh = runtime::ReadSmallFile(config_.token_file, kMaxTokenBytes);
    if (fresh.ok() && !Trim(*fresh).empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      token_ = Trim(*fresh);
      return token_;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  return token_;
}

std::string Client::Impl::Target(const std::string& path, const Query& query) const {
  return url_.base_path + path + QueryString(query);
}

void Client::Impl::Unauthorized() {
  if (exec_) exec_->Invalidate();
}

Result<http::request<http::string_body>> Client::Impl::MakeRequest(http::verb verb,
                                                                   const std::string& target,
                                                                   const std::string& body,
                                                                   std::string_view content_type) {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, url_.HostHeader());
  req.set(http::field::user_agent, "wasd");
  req.set(http::field::accept, "application/json");
  Result<std::string> token = CurrentToken();
  if (!token.ok()) return token.status();
  if (!token->empty()) req.set(http::field::authorization, "Bearer " + *token);
  if (!content_type.empty()) {
    req.set(http::field::content_type, std::string(content_type));
  }
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  return req;
}

Result<std::unique_ptr<Connection>> Client::Impl::Open(Clock::time_point deadline,
                                                       const std::stop_token& stop) {
  auto conn = std::make_unique<Connection>(tls_ctx_.get());
  const auto now = Clock::now();
  const auto connect_deadline = std::min(deadline, now + config_.timeouts.connect);
  const auto handshake_deadline =
      std::min(deadline, now + config_.timeouts.connect + config_.timeouts.handshake);
  Status s = conn->Connect(url_, verify_name_, !config_.insecure_skip_tls_verify, connect_deadline,
                           handshake_deadline, stop);
  if (!s.ok()) return s;
  return conn;
}

std::unique_ptr<Connection> Client::Impl::TakeIdle() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  while (!idle_.empty()) {
    Idle idle = std::move(idle_.back());
    idle_.pop_back();
    if (now - idle.since < kMaxIdleAge) {
      idle.conn->reused = true;
      return std::move(idle.conn);
    }
  }
  return nullptr;
}

void Client::Impl::Release(std::unique_ptr<Connection> conn) {
  if (!conn || conn->broken()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < kMaxIdleConnections) idle_.push_back({std::move(conn), Clock::now()});
}

Client::Impl::Attempt Client::Impl::Exchange(http::verb verb, const std::string& target,
                                             const std::string& body, std::string_view content_type,
                                             Clock::time_point deadline,
                                             const std::stop_token& stop) {
  const bool idempotent =
      verb == http::verb::get || verb == http::verb::put || verb == http::verb::delete_;
  // At most two rounds: a pooled connection the server closed while idle is
  // replaced once by a fresh one.
  for (int round = 0; round < 2; ++round) {
    Attempt a;
    std::unique_ptr<Connection> conn = round == 0 ? TakeIdle() : nullptr;
    if (!conn) {
      Result<std::unique_ptr<Connection>> opened = Open(deadline, stop);
      if (!opened.ok()) {
        a.status = opened.status();
        a.never_sent = true;
        return a;
      }
      conn = std::move(opened).value();
    }
    Result<http::request<http::string_body>> req = MakeRequest(verb, target, body, content_type);
    if (!req.ok()) {
      Release(std::move(conn));
      a.status = req.status();  // not retried: the plugin said why
      return a;
    }
    a.status = conn->Write(req.value(), deadline, stop);
    bool stale = conn->reused && !a.status.ok() && a.status.kind() == Status::Kind::kUnreachable;
    if (a.status.ok()) {
      http::response_parser<http::string_body> parser;
      parser.body_limit(config_.limits.max_response_bytes);
      a.status = conn->Read(parser, deadline, stop);
      if (a.status.ok()) {
        const auto& res = parser.get();
        a.response.code = static_cast<int>(res.result_int());
        a.response.body = res.body();
        if (auto it = res.find(http::field::retry_after); it != res.end()) {
          a.response.retry_after = std::string(it->value());
        }
        if (res.keep_alive()) Release(std::move(conn));
        return a;
      }
      if (a.status.kind() == Status::Kind::kBadResponse) {
        a.status =
            Status::Error(Status::Kind::kBadResponse,
                          "response to " + target + ": " + a.status.message() + " (limit " +
                              std::to_string(config_.limits.max_response_bytes) + " body bytes)");
        return a;
      }
      stale = conn->reused && conn->failed_before_response() && idempotent;
    }
    if (!stale) return a;
  }
  Attempt unreachable;
  unreachable.status = Status::Error(Status::Kind::kUnreachable, "connection lost twice");
  return unreachable;
}

Result<nlohmann::json> Client::Impl::Call(http::verb verb, const std::string& path,
                                          const Query& query, const std::string& body,
                                          std::string_view content_type,
                                          const RequestOptions& options,
                                          const base::JsonProjection* projection) {
  if (!setup_error_.ok()) return setup_error_;
  if (projection == nullptr) projection = options.projection;
  const auto timeout = options.timeout.value_or(config_.timeouts.request);
  const auto deadline = Clock::now() + timeout;
  const std::string target = Target(path, query);
  const RetryPolicy& retry = config_.retry;
  for (int attempt = 0;; ++attempt) {
    if (Status s = Throttle(deadline, options.stop, target); !s.ok()) return s;
    Attempt a = Exchange(verb, target, body, content_type, deadline, options.stop);
    Status status = a.status;
    std::chrono::milliseconds wait{0};
    bool retryable = false;
    if (!status.ok()) {
      retryable = a.never_sent && status.kind() == Status::Kind::kUnreachable;
      wait = BackoffDelay(retry.backoff, attempt, Random01());
    } else if (a.response.code >= 200 && a.response.code < 300) {
      if (a.response.body.empty() || options.discard_answer) return nlohmann::json::object();
      nlohmann::json j = projection != nullptr
                             ? projection->Parse(a.response.body)
                             : nlohmann::json::parse(a.response.body, nullptr, false);
      if (j.is_discarded()) {
        return Status::Error(Status::Kind::kBadResponse, std::string(http::to_string(verb)) + " " +
                                                             target + ": response is not JSON");
      }
      return j;
    } else {
      status = ErrorFromResponse(a.response, retry.max_retry_after);
      if (a.response.code == 401) Unauthorized();
      const bool get = verb == http::verb::get;
      if (status.too_many_requests() || (status.server_error() && get && status.retry_after())) {
        retryable = true;
        wait = status.retry_after()
                   ? std::chrono::duration_cast<std::chrono::milliseconds>(*status.retry_after())
                   : BackoffDelay(retry.backoff, attempt, Random01());
      }
    }
    if (!retryable || attempt >= retry.max_retries || Clock::now() + wait >= deadline) {
      return status;
    }
    if (!SleepUnlessStopped(wait, options.stop)) {
      return Status::Error(Status::Kind::kCancelled, "while waiting to retry " + target);
    }
  }
}

Status Client::Impl::Throttle(Clock::time_point deadline, const std::stop_token& stop,
                              const std::string& target) {
  const std::chrono::nanoseconds wait = rate_limit_.Reserve();
  if (wait.count() == 0) return Status::Ok();
  if (Clock::now() + wait >= deadline) {
    rate_limit_.Cancel();
    char qps[32];
    std::snprintf(qps, sizeof qps, "%g", config_.rate_limit.qps);
    return Status::Error(Status::Kind::kTimeout, std::string("client rate limit (") + qps +
                                                     " requests/s): no request slot for " + target +
                                                     " before the call's deadline");
  }
  if (!SleepUnlessStopped(std::chrono::ceil<std::chrono::milliseconds>(wait), stop)) {
    return Status::Error(Status::Kind::kCancelled,
                         "while waiting for a request slot for " + target);
  }
  return Status::Ok();
}

Status ErrorFromResponse(const HttpResponse& response, std::chrono::seconds max_retry_after) {
  std::optional<std::chrono::seconds> retry_after;
  if (!response.retry_after.empty()) {
    retry_after =
        ParseRetryAfter(response.retry_after, std::chrono::system_clock::now(), max_retry_after);
  }
  const nlohmann::json j = nlohmann::json::parse(response.body, nullptr, false);
  if (j.is_object() && (j.contains("reason") || j.contains("message"))) {
    Status from_body = Status::FromStatusObject(j, response.code);
    // The HTTP code is authoritative; the body supplies reason and message.
    return Status::Http(response.code, from_body.reason(), from_body.message(), retry_after);
  }
  std::string snippet = response.body.substr(0, kMaxErrorSnippet);
  while (!snippet.empty() && (snippet.back() == '\n' || snippet.back() == '\r')) snippet.pop_back();
  return Status::Http(response.code, "", snippet, retry_after);
}

}  // namespace wasd::kube
