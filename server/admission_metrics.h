// AdmissionMetrics: the webhook's Prometheus metrics (names are a contract):
//
//   wasd_admission_requests_total{webhook,operation,allowed,code}   counter
//   wasd_admission_request_duration_seconds{webhook}                 histogram
//   wasd_admission_in_flight_requests                                gauge
//   wasd_admission_denials_total{rule}                               counter
//   wasd_admission_scale_lookups_pending                             gauge
//   wasd_admission_scale_lookups_refused_total{reason}               counter
//   wasd_tls_certificate_expiry_timestamp_seconds                    gauge
// followed by the process_* families and wasd_build_info
// (metrics/process_metrics.h). docs/metrics.md is the table of record.
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
#include <vector>

#include "admission/review.h"
#include "metrics/exposition.h"
#include "rules/rule_ids.h"

namespace wasd::server {

class AdmissionMetrics {
 public:
  // Upper bounds of the latency histogram, in seconds. A review is answered
  // in tens to hundreds of microseconds, so the buckets start at 100 µs; a
  // scale request waits for the API server (--lookup-timeout, 2 s by
  // default), and the API server gives up at the webhook's timeoutSeconds
  // (up to 30 s, 3 s in the chart): the tail reaches 10 s so that everything
  // short of a timeout lands in a finite bucket.
  static constexpr std::array<double, 16> kBucketBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0,  10.0};

  AdmissionMetrics() = default;
  AdmissionMetrics(const AdmissionMetrics&) = delete;
  AdmissionMetrics& operator=(const AdmissionMetrics&) = delete;

  // Counts one answered request. `operation` is the review's operation
  // (CREATE, UPDATE, DELETE, CONNECT; anything else counts as "unknown");
  // `code` is the status code reported (200, 422, or the HTTP status of a
  // non-review answer such as 400, 413, 503).
  void RecordRequest(admission::Webhook webhook, std::string_view operation, bool allowed, int code,
                     std::chrono::nanoseconds latency);

  // Counts one denial under each distinct rule id of its field errors
  // (admission::Summary::denied_rules).
  void RecordDenial(const std::vector<workloadbuilder::RuleId>& rule_ids);

  // A deployments/scale review answered 503 without its Deployment lookup
  // (server/scale_lookup_budget.h): `busy`, the pending-lookup limit was
  // reached; `expired`, its deadline passed while it waited for a worker.
  enum class LookupRefusal { kBusy, kExpired };
  void RecordLookupRefused(LookupRefusal reason) {
    lookups_refused_[reason == LookupRefusal::kBusy ? 0 : 1].fetch_add(1,
                                                                       std::memory_order_relaxed);
  }
  // Lookups queued or running.
  void AddPendingLookups(std::int64_t delta) {
    pending_lookups_.fetch_add(delta, std::memory_order_relaxed);
  }

  void AddInFlight(std::int64_t delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
  std::int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

  // The serving certificate's notAfter, in Unix seconds.
  void SetCertificateExpiry(std::int64_t unix_seconds) {
    cert_expiry_.store(unix_seconds, std::memory_order_relaxed);
  }

  // The Prometheus text exposition (format 0.0.4) of the webhook's metrics,
  // the process_* families and wasd_build_info.
  std::string RenderPrometheus() const;

 private:
  static constexpr std::size_t kWebhooks = 3;
  static constexpr std::array<std::string_view, 5> kOperations = {"CREATE", "UPDATE", "DELETE",
                                                                  "CONNECT", "unknown"};
  static constexpr std::array<int, 10> kCodes = {200, 400, 403, 404, 405, 413, 422, 429, 500, 503};

  using Counters =
      std::array<std::array<std::array<std::array<std::atomic<std::uint64_t>, kCodes.size()>, 2>,
                            kOperations.size()>,
                 kWebhooks>;

  Counters counters_{};
  static std::vector<double> Bounds() { return {kBucketBounds.begin(), kBucketBounds.end()}; }
  std::array<metrics::Histogram, kWebhooks> histograms_{
      metrics::Histogram(Bounds()), metrics::Histogram(Bounds()), metrics::Histogram(Bounds())};
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::int64_t> pending_lookups_{0};
  std::array<std::atomic<std::uint64_t>, 2> lookups_refused_{};  // busy, expired
  std::array<std::atomic<std::uint64_t>, rules::kRuleIds.size()> denials_{};
  std::atomic<std::int64_t> cert_expiry_{0};

  mutable std::mutex overflow_mu_;
  // (webhook, operation, allowed, code) -> count, for codes not in kCodes.
  std::map<std::tuple<std::size_t, std::size_t, bool, int>, std::uint64_t> overflow_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_ADMISSION_METRICS_H_
