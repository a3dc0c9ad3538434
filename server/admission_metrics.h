// AdmissionMetrics: the webhook's Prometheus metrics (names are a contract):
//
//   wasd_admission_requests_total{webhook,operation,allowed,code}   counter
//   wasd_admission_request_duration_seconds{webhook}                 histogram
//   wasd_admission_in_flight_requests                                gauge
//   wasd_tls_certificate_expiry_timestamp_seconds                    gauge
//
// The request path only does relaxed atomic increments into fixed arrays
// indexed by (webhook, operation, allowed, code): no locks, no allocation.
// Status codes outside the usual set go to a small locked overflow map,
// which only unusual answers ever touch.
//
// Thread-safe: every method may be called from any thread. A scrape reads the
// counters one by one, so it may see a request in the counter but not yet in
// the histogram (Prometheus tolerates this; each series is monotonic).
#ifndef WASD_SERVER_ADMISSION_METRICS_H_
#define WASD_SERVER_ADMISSION_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "admission/review.h"

namespace wasd::server {

class AdmissionMetrics {
 public:
  // Upper bounds of the latency histogram, in seconds. A review is answered
  // in tens to hundreds of microseconds, so the buckets start at 100 µs; a
  // scale request waits for the API server, hence the tail up to 1 s.
  static constexpr std::array<double, 13> kBucketBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};

  AdmissionMetrics() = default;
  AdmissionMetrics(const AdmissionMetrics&) = delete;
  AdmissionMetrics& operator=(const AdmissionMetrics&) = delete;

  // Counts one answered request. `operation` is the review's operation
  // (CREATE, UPDATE, DELETE, CONNECT; anything else counts as "unknown");
  // `code` is the status code reported (200, 422, or the HTTP status of a
  // non-review answer such as 400, 413, 503).
  void RecordRequest(admission::Webhook webhook, std::string_view operation, bool allowed, int code,
                     std::chrono::nanoseconds latency);

  void AddInFlight(std::int64_t delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
  std::int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

  // The serving certificate's notAfter, in Unix seconds.
  void SetCertificateExpiry(std::int64_t unix_seconds) {
    cert_expiry_.store(unix_seconds, std::memory_order_relaxed);
  }

  // The Prometheus text exposition (format 0.0.4) of all four metrics.
  std::string RenderPrometheus() const;

 private:
  static constexpr std::size_t kWebhooks = 3;
  static constexpr std::array<std::string_view, 5> kOperations = {"CREATE", "UPDATE", "DELETE",
                                                                  "CONNECT", "unknown"};
  static constexpr std::array<int, 10> kCodes = {200, 400, 403, 404, 405, 413, 422, 429, 500, 503};
  static constexpr std::size_t kBuckets = kBucketBounds.size() + 1;  // + the +Inf bucket

  struct Histogram {
    std::array<std::atomic<std::uint64_t>, kBuckets> buckets{};
    std::atomic<std::uint64_t> sum_nanos{0};
  };

  using Counters =
      std::array<std::array<std::array<std::array<std::atomic<std::uint64_t>, kCodes.size()>, 2>,
                            kOperations.size()>,
                 kWebhooks>;

  Counters counters_{};
  std::array<Histogram, kWebhooks> histograms_{};
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::int64_t> cert_expiry_{0};

  mutable std::mutex overflow_mu_;
  // (webhook, operation, allowed, code) -> count, for codes not in kCodes.
  std::map<std::tuple<std::size_t, std::size_t, bool, int>, std::uint64_t> overflow_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_ADMISSION_METRICS_H_
