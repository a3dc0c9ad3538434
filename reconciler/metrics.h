// Metrics: the reconciler's Prometheus metrics (text exposition format 0.0.4),
// all prefixed wasd_reconciler_:
//   reconciles_total{result="success|error"}         counter
//   errors_total                                      counter (failed reconciles)
//   writes_total{action}                              counter (API writes by plan action)
//   api_requests_total{verb,code}                     counter (code "0" = no answer)
//   queue_depth                                       gauge (keys ready to process)
//   queue_latency_seconds                             histogram (ready → picked up)
//   reconcile_duration_seconds                        histogram
//   leader                                            gauge (1 while this replica leads)
//   scheduling_api_served                             gauge (1 once Workload/PodGroup are served)
//
// Thread-safe: every method may be called from any thread.
#ifndef WASD_RECONCILER_METRICS_H_
#define WASD_RECONCILER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace wasd::reconciler {

class Histogram {
 public:
  // Buckets (seconds) from 1 ms to 60 s: API calls take milliseconds, a
  // reconcile with many gate lifts or a backed-off queue wait take seconds.
  static constexpr std::array<double, 12> kBounds = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,   1,    2.5,   10,   60};
  void Observe(double seconds);
  // Appends the _bucket/_sum/_count lines for `name`.
  void Render(const std::string& name, std::string* out) const;

 private:
  mutable std::mutex mu_;
  std::array<std::uint64_t, kBounds.size()> counts_{};
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  void CountReconcile(bool ok);
  void CountWrite(std::string_view action);
  void CountApiRequest(std::string_view verb, int code);
  void ObserveQueueLatency(std::chrono::nanoseconds d);
  void ObserveReconcile(std::chrono::nanoseconds d);
  void SetLeader(bool leader) { leader_ = leader; }
  void SetSchedulingApiServed(bool served) { api_served_ = served; }
  // Read at render time.
  void SetQueueDepthSource(std::function<std::size_t()> fn);

  std::uint64_t writes() const;
  std::uint64_t reconciles() const;

  // The whole exposition text.
  std::string Render() const;

 private:
  mutable std::mutex mu_;
  std::uint64_t reconcile_ok_ = 0;      // guarded by mu_
  std::uint64_t reconcile_error_ = 0;   // guarded by mu_
  std::map<std::string, std::uint64_t, std::less<>> writes_;                     // guarded by mu_
  std::map<std::pair<std::string, int>, std::uint64_t> api_requests_;            // guarded by mu_
  std::function<std::size_t()> queue_depth_;                                      // guarded by mu_
  Histogram queue_latency_;
  Histogram reconcile_duration_;
  std::atomic<bool> leader_{false};
  std::atomic<bool> api_served_{false};
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_METRICS_H_
