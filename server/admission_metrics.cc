#include "server/admission_metrics.h"

#include <charconv>

#include "metrics/exposition.h"
#include "metrics/process_metrics.h"

namespace wasd::server {
namespace {

constexpr admission::Webhook kWebhookOrder[] = {admission::Webhook::kValidateDeployment,
                                                admission::Webhook::kMutateDeployment,
                                                admission::Webhook::kMutatePod};

std::size_t WebhookIndex(admission::Webhook w) {
  switch (w) {
    case admission::Webhook::kValidateDeployment:
      return 0;
    case admission::Webhook::kMutateDeployment:
      return 1;
    case admission::Webhook::kMutatePod:
      return 2;
  }
  return 0;
}

// Appends a number in the shortest fixed-point form that reads back exactly
// ("0.0001", not "1e-04": le labels must match across scrapes and tools).
void AppendNumber(std::string* out, double v) {
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  if (ec == std::errc()) out->append(buf, end);
}

void AppendUint(std::string* out, std::uint64_t v) { out->append(std::to_string(v)); }

void AppendRequestSeries(std::string* out, std::string_view webhook, std::string_view operation,
                         bool allowed, int code, std::uint64_t count) {
  out->append("wasd_admission_requests_total{webhook=\"");
  out->append(webhook);
  out->append("\",operation=\"");
  out->append(operation);
  out->append(allowed ? "\",allowed=\"true\",code=\"" : "\",allowed=\"false\",code=\"");
  out->append(std::to_string(code));
  out->append("\"} ");
  AppendUint(out, count);
  out->push_back('\n');
}

}  // namespace

void AdmissionMetrics::RecordRequest(admission::Webhook webhook, std::string_view operation,
                                     bool allowed, int code, std::chrono::nanoseconds latency) {
  const std::size_t w = WebhookIndex(webhook);
  std::size_t op = kOperations.size() - 1;  // "unknown"
  for (std::size_t i = 0; i + 1 < kOperations.size(); ++i) {
    if (kOperations[i] == operation) op = i;
  }
  std::size_t c = kCodes.size();
  for (std::size_t i = 0; i < kCodes.size(); ++i) {
    if (kCodes[i] == code) c = i;
  }
  if (c < kCodes.size()) {
    counters_[w][op][allowed ? 1 : 0][c].fetch_add(1, std::memory_order_relaxed);
  } else {
    std::lock_guard<std::mutex> lock(overflow_mu_);
    ++overflow_[{w, op, allowed, code}];
  }

  const double seconds = std::chrono::duration<double>(latency).count();
  std::size_t bucket = kBucketBounds.size();  // +Inf
  for (std::size_t i = 0; i < kBucketBounds.size(); ++i) {
    if (seconds <= kBucketBounds[i]) {
      bucket = i;
      break;
    }
  }
  Histogram& h = histograms_[w];
  h.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  const auto nanos = latency.count() > 0 ? static_cast<std::uint64_t>(latency.count()) : 0;
  h.sum_nanos.fetch_add(nanos, std::memory_order_relaxed);
}

void AdmissionMetrics::RecordDenial(const std::vector<std::string_view>& rule_ids) {
  for (std::string_view id : rule_ids) {
    std::size_t i = rules::kRuleIds.size() - 1;  // "other"
    for (std::size_t j = 0; j < rules::kRuleIds.size(); ++j) {
      if (rules::kRuleIds[j] == id) i = j;
    }
    denials_[i].fetch_add(1, std::memory_order_relaxed);
  }
}

std::string AdmissionMetrics::RenderPrometheus() const {
  std::string out;
  out.reserve(8192);

  out.append(
      "# HELP wasd_admission_requests_total Admission requests answered, by webhook, operation, "
      "decision and status code.\n"
      "# TYPE wasd_admission_requests_total counter\n");
  for (std::size_t w = 0; w < kWebhooks; ++w) {
    const std::string_view name = admission::WebhookName(kWebhookOrder[w]);
    for (std::size_t op = 0; op < kOperations.size(); ++op) {
      for (int allowed = 0; allowed < 2; ++allowed) {
        for (std::size_t c = 0; c < kCodes.size(); ++c) {
          const std::uint64_t n = counters_[w][op][allowed][c].load(std::memory_order_relaxed);
          if (n != 0) AppendRequestSeries(&out, name, kOperations[op], allowed == 1, kCodes[c], n);
        }
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(overflow_mu_);
    for (const auto& [key, n] : overflow_) {
      const auto& [w, op, allowed, code] = key;
      AppendRequestSeries(&out, admission::WebhookName(kWebhookOrder[w]), kOperations[op], allowed,
                          code, n);
    }
  }

  out.append(
      "# HELP wasd_admission_request_duration_seconds Time from a request fully read to its "
      "answer, by webhook.\n"
      "# TYPE wasd_admission_request_duration_seconds histogram\n");
  for (std::size_t w = 0; w < kWebhooks; ++w) {
    const std::string_view name = admission::WebhookName(kWebhookOrder[w]);
    const Histogram& h = histograms_[w];
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      cumulative += h.buckets[b].load(std::memory_order_relaxed);
      out.append("wasd_admission_request_duration_seconds_bucket{webhook=\"");
      out.append(name);
      out.append("\",le=\"");
      if (b < kBucketBounds.size()) {
        AppendNumber(&out, kBucketBounds[b]);
      } else {
        out.append("+Inf");
      }
      out.append("\"} ");
      AppendUint(&out, cumulative);
      out.push_back('\n');
    }
    out.append("wasd_admission_request_duration_seconds_sum{webhook=\"");
    out.append(name);
    out.append("\"} ");
    AppendNumber(&out, static_cast<double>(h.sum_nanos.load(std::memory_order_relaxed)) / 1e9);
    out.append("\nwasd_admission_request_duration_seconds_count{webhook=\"");
    out.append(name);
    out.append("\"} ");
    AppendUint(&out, cumulative);
    out.push_back('\n');
  }

  out.append(
      "# HELP wasd_admission_in_flight_requests Admission requests read and not yet answered.\n"
      "# TYPE wasd_admission_in_flight_requests gauge\n"
      "wasd_admission_in_flight_requests ");
  out.append(std::to_string(in_flight_.load(std::memory_order_relaxed)));
  out.append(
      "\n# HELP wasd_tls_certificate_expiry_timestamp_seconds notAfter of the serving "
      "certificate in use, in Unix seconds.\n"
      "# TYPE wasd_tls_certificate_expiry_timestamp_seconds gauge\n"
      "wasd_tls_certificate_expiry_timestamp_seconds ");
  out.append(std::to_string(cert_expiry_.load(std::memory_order_relaxed)));
  out.push_back('\n');

  // Every rule id is rendered from the start (0 until a denial), so rate()
  // and alerts see the series before the first denial.
  metrics::AppendHeader(&out, "wasd_admission_denials_total", "counter",
                        "Denied admission requests by the WAS-API rule (spec/WAS-API.md §b) of "
                        "their field errors; a request denied by several rules counts for each.");
  for (std::size_t i = 0; i < rules::kRuleIds.size(); ++i) {
    std::string labels = "rule=\"";
    labels.append(rules::kRuleIds[i]).append("\"");
    metrics::AppendSample(&out, "wasd_admission_denials_total", labels,
                          static_cast<double>(denials_[i].load(std::memory_order_relaxed)));
  }
  metrics::AppendProcessMetrics(&out, metrics::ReadProcessSample());
  metrics::AppendBuildInfo(&out);
  return out;
}

}  // namespace wasd::server
