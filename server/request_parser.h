// RequestParser: Beast's HTTP/1 request parser (basic_parser) without a
// fields container or a body type. It keeps what the admission session
// reads of a request: the method, the target, whether the client expects
// `100 Continue`, and (from basic_parser) keep-alive, Content-Length and
// chunking. A Content-Length body is not read through it: the session
// leaves such a body in its read buffer and hands admission::Review a view
// of it there, without a copy. A chunked body (rare: the API server sends
// Content-Length) is read through the parser and appended to `*chunked_body`.
//
// One per request, as Beast requires of its parsers. Not thread-safe (used on
// the session's strand).
#ifndef WASD_SERVER_REQUEST_PARSER_H_
#define WASD_SERVER_REQUEST_PARSER_H_

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wasd::server {

class RequestParser : public boost::beast::http::basic_parser<true> {
 public:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;

  // `target` receives the request target; `chunked_body` the body of a
  // chunked request. Both are cleared here and must outlive the parser.
  RequestParser(std::string* target, std::string* chunked_body)
      : target_(target), chunked_body_(chunked_body) {
    target_->clear();
    chunked_body_->clear();
  }

  boost::beast::http::verb method() const { return method_; }
  // True when the (first) Expect field is `100-continue`.
  bool expect_continue() const { return expect_continue_; }

 private:
  void on_request_impl(boost::beast::http::verb method, string_view, string_view target, int,
                       error_code&) override {
    method_ = method;
    target_->assign(target.data(), target.size());
  }
  void on_response_impl(int, string_view, int, error_code&) override {}  // requests only
  void on_field_impl(boost::beast::http::field name, string_view, string_view value,
                     error_code&) override {
    if (name != boost::beast::http::field::expect || seen_expect_) return;
    seen_expect_ = true;
    expect_continue_ = boost::beast::iequals(value, "100-continue");
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}
  std::size_t on_body_impl(string_view body, error_code&) override {
    chunked_body_->append(body.data(), body.size());  // only when the session reads through us
    return body.size();
  }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code&) override {
    chunked_body_->append(body.data(), body.size());
    return body.size();
  }
  void on_finish_impl(error_code&) override {}

  std::string* target_;
  std::string* chunked_body_;
  boost::beast::http::verb method_ = boost::beast::http::verb::unknown;
  bool seen_expect_ = false;
  bool expect_continue_ = false;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_REQUEST_PARSER_H_
