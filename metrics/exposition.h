// Building blocks of the Prometheus text exposition (format 0.0.4) shared by
// the webhook's and the reconciler's /metrics: HELP/TYPE headers, number and
// label formatting, and a fixed-bucket histogram.
//
// Numbers are written in the shortest fixed-point form that reads back
// exactly ("0.0001", "2.5", "1764633600.25", never "1e-04"), so bucket
// bounds (`le`) are the same string in every scrape and every tool.
//
// Thread-safe: the free functions are pure; Histogram may be observed and
// rendered from any thread.
#ifndef WASD_METRICS_EXPOSITION_H_
#define WASD_METRICS_EXPOSITION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wasd::metrics {

// Appends "# HELP <name> <help>\n# TYPE <name> <type>\n".
void AppendHeader(std::string* out, std::string_view name, std::string_view type,
                  std::string_view help);

// Appends `v`: shortest exact fixed-point form; "+Inf", "-Inf", "NaN".
void AppendNumber(std::string* out, double v);

// Appends a label value with \, " and newline escaped.
void AppendLabelValue(std::string* out, std::string_view value);

// Appends `name{labels} value\n`; `labels` is the inside of the braces
// ("a=\"x\",b=\"y\"") or empty for none.
void AppendSample(std::string* out, std::string_view name, std::string_view labels, double value);

// A histogram with fixed upper bounds (ascending, +Inf implied). Lock-free:
// Observe is two relaxed atomic adds after a bucket search, cheap enough for
// the admission request path; a scrape may see an observation in a bucket
// before it reaches the sum (Prometheus tolerates that).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  std::uint64_t count() const;

  // The buckets (per bucket, the last +Inf) and the sum, read once, so that
  // one scrape can render the same observations under two names.
  struct Snapshot {
    std::vector<std::uint64_t> counts;
    double sum = 0;
  };
  Snapshot Take() const;

  // Appends the cumulative <name>_bucket lines (le last among the labels),
  // <name>_sum and <name>_count; `labels` as for AppendSample.
  void Render(std::string* out, std::string_view name, std::string_view labels) const;
  void Render(std::string* out, std::string_view name, std::string_view labels,
              const Snapshot& snapshot) const;

 private:
  const std::vector<double> bounds_;
  // Per bucket, not cumulative; the last is +Inf.
  const std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

}  // namespace wasd::metrics

#endif  // WASD_METRICS_EXPOSITION_H_
