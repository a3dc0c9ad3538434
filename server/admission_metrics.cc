#include "server/admission_metrics.h"

#include "metrics/exposition.h"
#include "metrics/process_metrics.h"

namespace wasd::server {
namespace {

constexpr admission::Webhook kWebhookOrder[] = {admission::Webhook::kValidateDeployment,
                                                admission::Webhook::kMutateDeployment,
                                                admission::Webhook::kMutatePod};

std::size_t WebhookIndex(admission::Webhook w) {
  switch (w) {
    case admission::Webhook::kValidateDeployment: return 0;
    case admission::Webhook::kMutateDeployment: return 1;
    case admission::Webhook::kMutatePod: return 2;
  }
  return 0;
}

void AppendRequestSeries(std::string* out, std::string_view webhook, std::string_view operation,
                         bool allowed, int code, std::uint64_t count) {
  std::string labels = "webhook=\"";
  labels.append(webhook).append("\",operation=\"").append(operation);
  labels.append(allowed ? "\",allowed=\"true\",code=\"" : "\",allowed=\"false\",code=\"");
  labels.append(std::to_string(code)).append("\"");
  metrics::AppendSample(out, "wasd_admission_requests_total", labels, static_cast<double>(count));
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

  histograms_[w].Observe(std::chrono::duration<double>(latency).count());
}

void AdmissionMetrics::RecordDenial(const std::vector<workloadbuilder::RuleId>& rule_ids) {
  for (workloadbuilder::RuleId id : rule_ids) {
    denials_[static_cast<std::size_t>(id)].fetch_add(1, std::memory_order_relaxed);
  }
}

std::string AdmissionMetrics::RenderPrometheus() const {
  std::string out;
  out.reserve(8192);

  metrics::AppendHeader(&out, "wasd_admission_requests_total", "counter",
                        "Admission requests answered, by webhook, operation, decision and status "
                        "code.");
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

  metrics::AppendHeader(&out, "wasd_admission_request_duration_seconds", "histogram",
                        "Time from a request fully read to its answer, by webhook.");
  for (std::size_t w = 0; w < kWebhooks; ++w) {
    std::string labels = "webhook=\"";
    labels.append(admission::WebhookName(kWebhookOrder[w])).append("\"");
    histograms_[w].Render(&out, "wasd_admission_request_duration_seconds", labels);
  }

  metrics::AppendHeader(&out, "wasd_admission_in_flight_requests", "gauge",
                        "Admission requests read and not yet answered.");
  metrics::AppendSample(&out, "wasd_admission_in_flight_requests", "",
                        static_cast<double>(in_flight_.load(std::memory_order_relaxed)));
  metrics::AppendHeader(&out, "wasd_admission_scale_lookups_pending", "gauge",
                        "deployments/scale reviews waiting for or doing their Deployment lookup.");
  metrics::AppendSample(&out, "wasd_admission_scale_lookups_pending", "",
                        static_cast<double>(pending_lookups_.load(std::memory_order_relaxed)));
  metrics::AppendHeader(&out, "wasd_admission_scale_lookups_refused_total", "counter",
                        "deployments/scale reviews answered 503 without their Deployment lookup: "
                        "busy (--max-pending-scale-lookups reached) or expired (the review's "
                        "timeout passed while it waited for a lookup worker).");
  metrics::AppendSample(&out, "wasd_admission_scale_lookups_refused_total", "reason=\"busy\"",
                        static_cast<double>(lookups_refused_[0].load(std::memory_order_relaxed)));
  metrics::AppendSample(&out, "wasd_admission_scale_lookups_refused_total", "reason=\"expired\"",
                        static_cast<double>(lookups_refused_[1].load(std::memory_order_relaxed)));
  metrics::AppendHeader(&out, "wasd_tls_certificate_expiry_timestamp_seconds", "gauge",
                        "notAfter of the serving certificate in use, in Unix seconds.");
  metrics::AppendSample(&out, "wasd_tls_certificate_expiry_timestamp_seconds", "",
                        static_cast<double>(cert_expiry_.load(std::memory_order_relaxed)));

  // Every rule id is rendered from the start (0 until a denial), so rate()
  // and alerts see the series before the first denial.
  metrics::AppendHeader(&out, "wasd_admission_denials_total", "counter",
                        "Denied admission requests by the rule (docs/api.md §b) of "
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
