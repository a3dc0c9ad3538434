// wasd-openloop: an open-loop HTTPS load generator for the webhook's latency
// at a fixed arrival rate (tools/bench/latency.sh, tools/bench/RESULTS.md "Open-loop latency").
//
// A closed-loop client (wrk, hey) sends a connection's next request only when
// the previous answer is in, so a slow answer delays the requests behind it
// and they are never measured as late ("coordinated omission"): its p99 is
// bounded by the client, not the server. Here request i is due at
//   t0 + i / rate
// whatever happened before, on one of N kept-alive TLS connections. A due
// request with no idle connection waits in a queue, and its latency is
// measured from the time it was DUE to the last byte of its answer, so
// queueing (in the client, the kernel or the server) is counted.
//
// One thread, one io_context: the client's own cost is part of its floor,
// which tools/bench/latency.sh measures by sending the same body, at the same rate,
// to a path the server answers with a 404 (TLS, HTTP and the wake-ups, but no
// JSON and no rules). Its send lag (actual send time minus due time) is
// printed too: the part of the floor that is the client's timer.
//
// Percentiles come from a log-linear histogram of nanoseconds (64 buckets per
// power of two: ≤ 1.6 % relative error, the upper edge of a bucket reported).
//
// Output: one line of `key=value` pairs on stdout, or a JSON object with
// --json. Exit 0 when every measured request got the expected answer
// (--expect-status, and --expect-substring in its body), 1 when some did not
// (wrong answers, I/O errors and requests unanswered --drain after the
// schedule are counted and reported, never hidden), 2 on a usage error. Loopback or any host: it
// connects where it is told.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <openssl/ssl.h>
#include <sys/resource.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <nlohmann/json.hpp>

#include "runtime/flags.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

// Log-linear histogram of non-negative nanosecond values.
class Histogram {
 public:
  void Record(std::int64_t ns) {
    const std::uint64_t v = ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
    const std::size_t i = Index(v);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++total_;
    max_ = std::max(max_, v);
  }
  std::uint64_t count() const { return total_; }
  std::uint64_t max() const { return max_; }
  // The value at quantile q (0 < q ≤ 1): the upper edge of the bucket that
  // holds the ceil(q × count)-th smallest value, never above the maximum.
  std::uint64_t Quantile(double q) const {
    if (total_ == 0) return 0;
    const auto rank = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_))));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(UpperEdge(i), max_);
    }
    return max_;
  }

 private:
  static constexpr int kSubBits = 6;                        // 64 buckets per power of two
  static constexpr std::uint64_t kLinear = 2u << kSubBits;  // 0..127 exact
  static std::size_t Index(std::uint64_t v) {
    if (v < kLinear) return static_cast<std::size_t>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSubBits;  // ≥ 1
    return static_cast<std::size_t>(shift) << kSubBits | static_cast<std::size_t>(v >> shift);
  }
  static std::uint64_t UpperEdge(std::size_t i) {
    if (i < kLinear) return i;
    const std::size_t shift = (i >> kSubBits) - 1;
    const std::uint64_t mantissa = (i & ((1u << kSubBits) - 1)) + (1u << kSubBits);
    return ((mantissa + 1) << shift) - 1;
  }
  std::vector<std::uint64_t> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t max_ = 0;
};

struct Config {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string path = "/";
  std::string body_file;
  std::string cacert;
  bool insecure = false;
  std::string server_name = "localhost";
  int rate = 1000;
  std::chrono::milliseconds duration{5000};
  std::chrono::milliseconds warmup{1000};
  std::chrono::milliseconds drain{5000};
  int connections = 32;
  int expect_status = 200;
  std::string expect_substring;  // every answer's body must contain it
  bool json = false;
};

class Generator;

// One kept-alive TLS connection; at most one request in flight.
using Stream = ssl::stream<tcp::socket>;
struct Connection {
  std::unique_ptr<Stream> stream;
  beast::flat_buffer buffer;
  std::optional<http::response_parser<http::string_body>> parser;
  Clock::time_point due{};  // when the request in flight was due
  std::uint64_t seq = 0;    // its number in the schedule
  bool busy = false;
  bool up = false;
};

class Generator {
 public:
  Generator(const Config& config, std::string request)
      : config_(config),
        request_(std::move(request)),
        tls_(ssl::context::tls_client),
        timer_(io_),
        interval_(nanoseconds(1'000'000'000LL) / config.rate),
        warmup_requests_(static_cast<std::uint64_t>(config.rate) *
                         static_cast<std::uint64_t>(config.warmup.count()) / 1000),
        measured_requests_(static_cast<std::uint64_t>(config.rate) *
                           static_cast<std::uint64_t>(config.duration.count()) / 1000) {
    if (config.insecure) {
      tls_.set_verify_mode(ssl::verify_none);
    } else {
      tls_.set_verify_mode(ssl::verify_peer);
      tls_.load_verify_file(config.cacert);
    }
  }

  // Connects every connection, runs the schedule, waits for the answers.
  // Returns "" or why it could not start.
  std::string Run() {
    tcp::resolver resolver(io_);
    beast::error_code ec;
    endpoints_ = resolver.resolve(config_.host, std::to_string(config_.port), ec);
    if (ec) return "resolving " + config_.host + ": " + ec.message();
    for (int i = 0; i < config_.connections; ++i) {
      auto c = std::make_unique<Connection>();
      if (std::string error = ConnectBlocking(*c); !error.empty()) return error;
      conns_.push_back(std::move(c));
    }
    for (auto& c : conns_) idle_.push_back(c.get());
    t0_ = Clock::now() + std::chrono::milliseconds(10);
    measure_from_ = warmup_requests_;
    total_ = warmup_requests_ + measured_requests_;
    ScheduleNext();
    io_.run();
    return "";
  }

  void Report(std::ostream& out) const {
    const double ms = 1e-6;
    const auto q = [&](const Histogram& h, double p) {
      return static_cast<double>(h.Quantile(p)) * ms;
    };
    const double achieved = measured_done_span_ > nanoseconds(0)
                                ? static_cast<double>(latency_.count()) /
                                      (static_cast<double>(measured_done_span_.count()) * 1e-9)
                                : 0.0;
    nlohmann::ordered_json j;
    j["rate"] = config_.rate;
    j["durationSeconds"] = static_cast<double>(config_.duration.count()) / 1000.0;
    j["connections"] = config_.connections;
    j["scheduled"] = measured_requests_;
    j["sent"] = measured_sent_;
    j["completed"] = latency_.count();
    j["errors"] = wrong_answers_ + io_errors_ + unanswered_;
    j["wrongAnswers"] = wrong_answers_;
    j["ioErrors"] = io_errors_;
    j["unanswered"] = unanswered_;
    j["reconnects"] = reconnects_;
    j["answeredTotal"] = answered_total_;  // warm-up included: the server's work
    j["achievedRate"] = std::round(achieved * 10) / 10;
    j["p50Ms"] = q(latency_, 0.50);
    j["p90Ms"] = q(latency_, 0.90);
    j["p99Ms"] = q(latency_, 0.99);
    j["p999Ms"] = q(latency_, 0.999);
    j["maxMs"] = static_cast<double>(latency_.max()) * ms;
    j["sendLagP99Ms"] = q(send_lag_, 0.99);
    j["sendLagMaxMs"] = static_cast<double>(send_lag_.max()) * ms;
    j["maxQueued"] = max_queued_;
    // The generator's own CPU per answer (user + system, whole run): at a
    // rate R it must stay well under 1e6 / R µs, or the generator is the bound.
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double cpu_us = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
                          static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    j["generatorCpuUsPerAnswer"] =
        answered_total_ > 0 ? std::round(cpu_us / static_cast<double>(answered_total_) * 10) / 10
                            : 0.0;
    if (config_.json) {
      out << j.dump() << "\n";
      return;
    }
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      out << (first ? "" : " ") << key << "=";
      if (value.is_number_float()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", value.get<double>());
        out << buf;
      } else {
        out << value.dump();
      }
      first = false;
    }
    out << "\n";
  }

  bool ok() const { return wrong_answers_ + io_errors_ + unanswered_ == 0; }

 private:
  Clock::time_point Due(std::uint64_t seq) const {
    return t0_ + interval_ * static_cast<std::int64_t>(seq);
  }

  // A new TCP connection and TLS handshake (a stream is never reused after
  // a failure).
  std::string ConnectBlocking(Connection& c) {
    c.stream = std::make_unique<Stream>(io_, tls_);
    c.buffer.clear();
    beast::error_code ec;
    asio::connect(c.stream->next_layer(), endpoints_, ec);
    if (ec)
      return "connecting to " + config_.host + ":" + std::to_string(config_.port) + ": " +
             ec.message();
    c.stream->next_layer().set_option(tcp::no_delay(true), ec);
    // SSL_set_tlsext_host_name without the macro's C cast.
    SSL_ctrl(c.stream->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(config_.server_name.c_str()));
    if (!config_.insecure)
      c.stream->set_verify_callback(ssl::host_name_verification(config_.server_name));
    c.stream->handshake(ssl::stream_base::client, ec);
    if (ec)
      return "TLS handshake with " + config_.host + ":" + std::to_string(config_.port) + ": " +
             ec.message();
    c.up = true;
    return "";
  }

  // Dispatches every request due by now, then sleeps until the next one.
  void ScheduleNext() {
    const auto now = Clock::now();
    while (next_ < total_ && Due(next_) <= now) {
      Dispatch(next_++);
    }
    if (next_ >= total_) {
      // Everything is sent or queued: give the answers `drain` to arrive.
      timer_.expires_after(config_.drain);
      timer_.async_wait([this](beast::error_code ec) {
        if (!ec) Stop();
      });
      return;
    }
    timer_.expires_at(Due(next_));
    timer_.async_wait([this](beast::error_code ec) {
      if (!ec) ScheduleNext();
    });
  }

  void Dispatch(std::uint64_t seq) {
    if (idle_.empty()) {
      backlog_.push_back(seq);
      max_queued_ = std::max<std::uint64_t>(max_queued_, backlog_.size());
      return;
    }
    Connection* c = idle_.front();
    idle_.pop_front();
    Send(*c, seq);
  }

  void Send(Connection& c, std::uint64_t seq) {
    c.busy = true;
    c.seq = seq;
    c.due = Due(seq);
    if (seq >= measure_from_) {
      ++measured_sent_;
      send_lag_.Record((Clock::now() - c.due).count());
    }
    ++in_flight_;
    asio::async_write(*c.stream, asio::buffer(request_),
                      [this, &c](beast::error_code ec, std::size_t) {
                        if (ec) return Failed(c, ec);
                        c.parser.emplace();
                        c.parser->body_limit(std::uint64_t{64} * 1024 * 1024);
                        http::async_read(*c.stream, c.buffer, *c.parser,
                                         [this, &c](beast::error_code ec2, std::size_t) {
                                           if (ec2) return Failed(c, ec2);
                                           Answered(c);
                                         });
                      });
  }

  void Answered(Connection& c) {
    const auto done = Clock::now();
    --in_flight_;
    ++answered_total_;
    if (c.seq >= measure_from_) {
      const auto& answer = c.parser->get();
      const bool good = static_cast<int>(answer.result_int()) == config_.expect_status &&
                        (config_.expect_substring.empty() ||
                         answer.body().find(config_.expect_substring) != std::string::npos);
      if (good) {
        latency_.Record((done - c.due).count());
        measured_done_span_ = done - Due(measure_from_);
      } else {
        ++wrong_answers_;
        if (first_wrong_answer_.empty()) {
          first_wrong_answer_ = std::to_string(c.parser->get().result_int()) + " " +
                                c.parser->get().body().substr(0, 200);
        }
      }
    }
    const bool keep_alive = c.parser->get().keep_alive();
    c.busy = false;
    if (!keep_alive) {
      // The server closes: reconnect, then serve the queue.
      Reconnect(c);
      return;
    }
    Idle(c);
  }

  void Idle(Connection& c) {
    if (stopping_) return;
    if (!backlog_.empty()) {
      const std::uint64_t seq = backlog_.front();
      backlog_.pop_front();
      Send(c, seq);
      return;
    }
    idle_.push_back(&c);
    MaybeFinish();
  }

  void Failed(Connection& c, beast::error_code ec) {
    if (stopping_) return;
    --in_flight_;
    if (c.seq >= measure_from_) ++io_errors_;
    if (first_io_error_.empty()) first_io_error_ = ec.message();
    c.busy = false;
    Reconnect(c);
  }

  // A fresh TCP connection and TLS handshake in place of a broken one;
  // bounded: after kMaxReconnects in the whole run the connection stays down.
  void Reconnect(Connection& c) {
    static constexpr std::uint64_t kMaxReconnects = 1000;
    beast::error_code ignored;
    c.stream->next_layer().close(ignored);
    c.up = false;
    if (reconnects_ >= kMaxReconnects) {
      MaybeFinish();
      return;
    }
    ++reconnects_;
    if (std::string error = ConnectBlocking(c); !error.empty()) {
      if (first_io_error_.empty()) first_io_error_ = error;
      MaybeFinish();
      return;
    }
    Idle(c);
  }

  void MaybeFinish() {
    if (next_ >= total_ && in_flight_ == 0 && backlog_.empty()) Stop();
  }

  void Stop() {
    if (stopping_) return;
    stopping_ = true;
    unanswered_ =
        measured_requests_ -
        std::min<std::uint64_t>(measured_requests_, latency_.count() + wrong_answers_ + io_errors_);
    timer_.cancel();
    for (auto& c : conns_) {
      beast::error_code ignored;
      c->stream->next_layer().close(ignored);
    }
    io_.stop();
  }

 public:
  std::string first_wrong_answer_;
  std::string first_io_error_;

 private:
  const Config& config_;
  const std::string request_;
  asio::io_context io_;
  ssl::context tls_;
  asio::steady_timer timer_;
  tcp::resolver::results_type endpoints_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::deque<Connection*> idle_;
  std::deque<std::uint64_t> backlog_;
  const nanoseconds interval_;
  const std::uint64_t warmup_requests_;
  const std::uint64_t measured_requests_;
  std::uint64_t measure_from_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t next_ = 0;
  std::uint64_t in_flight_ = 0;
  Clock::time_point t0_{};
  nanoseconds measured_done_span_{0};
  Histogram latency_;
  Histogram send_lag_;
  std::uint64_t measured_sent_ = 0;
  std::uint64_t answered_total_ = 0;
  std::uint64_t wrong_answers_ = 0;
  std::uint64_t io_errors_ = 0;
  std::uint64_t unanswered_ = 0;
  std::uint64_t reconnects_ = 0;
  std::uint64_t max_queued_ = 0;
  bool stopping_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  Config config;
  wasd::runtime::FlagSet flags(
      "wasd-openloop", "wasd-openloop --port N --body FILE --rate R [flags]",
      "Sends POST requests at a fixed arrival rate over kept-alive TLS connections and prints\n"
      "latency percentiles measured from each request's scheduled send time (open loop:\n"
      "a late answer does not delay the schedule, and queueing is counted).");
  flags.String("host", &config.host, "HOST", "server address");
  flags.Int("port", &config.port, 1, 65535, "server port").Required();
  flags.String("path", &config.path, "PATH", "request path");
  flags.String("body", &config.body_file, "FILE", "request body (sent as application/json)")
      .Required();
  flags.String("cacert", &config.cacert, "FILE",
               "CA bundle that verifies the server's certificate");
  flags.Bool("insecure", &config.insecure, "do not verify the server's certificate");
  flags.String("server-name", &config.server_name, "NAME",
               "TLS server name (SNI and verification)");
  flags.Int("rate", &config.rate, 1, 1'000'000,
            "requests per second, in total over all connections");
  flags.Duration("duration", &config.duration, std::chrono::milliseconds(100),
                 "how long to measure");
  flags.Duration("warmup", &config.warmup, std::chrono::milliseconds(0),
                 "how long to send at the same rate before measuring");
  flags.Duration("drain", &config.drain, std::chrono::milliseconds(100),
                 "how long to wait for answers after the last scheduled request");
  flags.Int("connections", &config.connections, 1, 10'000, "kept-alive TLS connections");
  flags.Int("expect-status", &config.expect_status, 100, 599,
            "the HTTP status every answer must have (others are counted as errors)");
  flags.String("expect-substring", &config.expect_substring, "TEXT",
               "text every answer's body must contain (others are counted as errors)");
  flags.Bool("json", &config.json, "print the result as one JSON object");
  if (auto code = flags.ParseOrExit(argc, argv)) return *code;
  if (config.cacert.empty() && !config.insecure)
    return flags.UsageError("give --cacert FILE or --insecure");

  std::ifstream in(config.body_file, std::ios::binary);
  if (!in) return flags.UsageError("cannot read --body " + config.body_file);
  std::stringstream body;
  body << in.rdbuf();
  const std::string text = body.str();
  std::string request =
      "POST " + config.path + " HTTP/1.1\r\nHost: " + config.server_name +
      "\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: " +
      std::to_string(text.size()) + "\r\n\r\n" + text;

  try {
    Generator generator(config, std::move(request));
    if (std::string error = generator.Run(); !error.empty()) {
      std::cerr << "wasd-openloop: " << error << "\n";
      return 1;
    }
    generator.Report(std::cout);
    if (!generator.first_wrong_answer_.empty())
      std::cerr << "wasd-openloop: first unexpected answer: " << generator.first_wrong_answer_
                << "\n";
    if (!generator.first_io_error_.empty())
      std::cerr << "wasd-openloop: first I/O error: " << generator.first_io_error_ << "\n";
    return generator.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "wasd-openloop: " << e.what() << "\n";
    return 1;
  }
}
