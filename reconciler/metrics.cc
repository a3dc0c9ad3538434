#include "reconciler/metrics.h"

#include <cstdio>

namespace wasd::reconciler {

namespace {

constexpr const char* kPrefix = "wasd_reconciler_";

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void Header(std::string* out, const std::string& name, const char* type, const char* help) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void Histogram::Observe(double seconds) {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) ++counts_[i];
  }
  ++count_;
  sum_ += seconds;
}

void Histogram::Render(const std::string& name, std::string* out) const {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    *out += name + "_bucket{le=\"" + Number(kBounds[i]) + "\"} " + std::to_string(counts_[i]) + "\n";
  }
  *out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  *out += name + "_sum " + Number(sum_) + "\n";
  *out += name + "_count " + std::to_string(count_) + "\n";
}

void Metrics::CountReconcile(bool ok) {
  std::lock_guard lock(mu_);
  ++(ok ? reconcile_ok_ : reconcile_error_);
}

void Metrics::CountWrite(std::string_view action) {
  std::lock_guard lock(mu_);
  auto it = writes_.find(action);
  if (it == writes_.end()) it = writes_.emplace(std::string(action), 0).first;
  ++it->second;
}

void Metrics::CountApiRequest(std::string_view verb, int code) {
  std::lock_guard lock(mu_);
  ++api_requests_[{std::string(verb), code}];
}

void Metrics::ObserveQueueLatency(std::chrono::nanoseconds d) {
  queue_latency_.Observe(std::chrono::duration<double>(d).count());
}

void Metrics::ObserveReconcile(std::chrono::nanoseconds d) {
  reconcile_duration_.Observe(std::chrono::duration<double>(d).count());
}

void Metrics::SetQueueDepthSource(std::function<std::size_t()> fn) {
  std::lock_guard lock(mu_);
  queue_depth_ = std::move(fn);
}

std::uint64_t Metrics::writes() const {
  std::lock_guard lock(mu_);
  std::uint64_t n = 0;
  for (const auto& [action, count] : writes_) n += count;
  return n;
}

std::uint64_t Metrics::reconciles() const {
  std::lock_guard lock(mu_);
  return reconcile_ok_ + reconcile_error_;
}

std::string Metrics::Render() const {
  std::string out;
  const std::string p = kPrefix;
  std::function<std::size_t()> depth;
  {
    std::lock_guard lock(mu_);
    Header(&out, p + "reconciles_total", "counter", "Reconciles of Deployments by result.");
    out += p + "reconciles_total{result=\"success\"} " + std::to_string(reconcile_ok_) + "\n";
    out += p + "reconciles_total{result=\"error\"} " + std::to_string(reconcile_error_) + "\n";
    Header(&out, p + "errors_total", "counter", "Reconciles that failed and were retried.");
    out += p + "errors_total " + std::to_string(reconcile_error_) + "\n";
    Header(&out, p + "writes_total", "counter", "API writes by plan action.");
    for (const auto& [action, count] : writes_) {
      out.append(p).append("writes_total{action=\"").append(action).append("\"} ");
      out.append(std::to_string(count)).append("\n");
    }
    Header(&out, p + "api_requests_total", "counter",
           "API requests made by the reconcile loop and leader election, by verb and HTTP code.");
    for (const auto& [key, count] : api_requests_) {
      out += p + "api_requests_total{verb=\"" + key.first + "\",code=\"" +
             std::to_string(key.second) + "\"} " + std::to_string(count) + "\n";
    }
    depth = queue_depth_;
  }
  Header(&out, p + "queue_depth", "gauge", "Deployment keys waiting to be reconciled.");
  out += p + "queue_depth " + std::to_string(depth ? depth() : 0) + "\n";
  Header(&out, p + "queue_latency_seconds", "histogram", "Time a key waited in the queue.");
  queue_latency_.Render(p + "queue_latency_seconds", &out);
  Header(&out, p + "reconcile_duration_seconds", "histogram", "Time one reconcile took.");
  reconcile_duration_.Render(p + "reconcile_duration_seconds", &out);
  Header(&out, p + "leader", "gauge", "1 while this replica holds the Lease.");
  out += p + "leader " + std::string(leader_ ? "1" : "0") + "\n";
  Header(&out, p + "scheduling_api_served", "gauge",
         "1 once scheduling.k8s.io/v1beta1 workloads and podgroups are served.");
  out += p + "scheduling_api_served " + std::string(api_served_ ? "1" : "0") + "\n";
  return out;
}

}  // namespace wasd::reconciler
