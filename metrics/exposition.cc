#include "metrics/exposition.h"

#include <charconv>
#include <cmath>
#include <utility>

namespace wasd::metrics {

void AppendHeader(std::string* out, std::string_view name, std::string_view type,
                  std::string_view help) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
  out->append(name).append(" ").append(type).append("\n");
}

void AppendNumber(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  // The longest fixed form of a double is ~330 characters (DBL_MAX).
  char buf[400];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  if (ec == std::errc()) out->append(buf, end);
}

void AppendLabelValue(std::string* out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '"') {
      out->append("\\\"");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

void AppendSample(std::string* out, std::string_view name, std::string_view labels, double value) {
  out->append(name);
  if (!labels.empty()) out->append("{").append(labels).append("}");
  out->push_back(' ');
  AppendNumber(out, value);
  out->push_back('\n');
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::uint64_t Histogram::count() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) n += counts_[i].load(std::memory_order_relaxed);
  return n;
}

Histogram::Snapshot Histogram::Take() const {
  Snapshot s;
  s.counts.resize(bounds_.size() + 1);
  for (std::size_t i = 0; i < s.counts.size(); ++i) {
    s.counts[i] = counts_[i].load(std::memory_order_relaxed);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

void Histogram::Render(std::string* out, std::string_view name, std::string_view labels) const {
  Render(out, name, labels, Take());
}

void Histogram::Render(std::string* out, std::string_view name, std::string_view labels,
                       const Snapshot& snapshot) const {
  const std::vector<std::uint64_t>& counts = snapshot.counts;
  const double sum = snapshot.sum;
  const std::string bucket = std::string(name) + "_bucket";
  const std::string prefix = labels.empty() ? std::string() : std::string(labels) + ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    std::string le = prefix + "le=\"";
    if (i < bounds_.size()) {
      AppendNumber(&le, bounds_[i]);
    } else {
      le += "+Inf";
    }
    le += "\"";
    AppendSample(out, bucket, le, static_cast<double>(cumulative));
  }
  AppendSample(out, std::string(name) + "_sum", labels, sum);
  AppendSample(out, std::string(name) + "_count", labels, static_cast<double>(cumulative));
}

}  // namespace wasd::metrics
