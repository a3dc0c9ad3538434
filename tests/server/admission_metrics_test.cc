#include "server/admission_metrics.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

namespace wasd::server {
namespace {

using admission::Webhook;
using std::chrono::microseconds;

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST_CASE("request counter series carry the four labels", "[unit][server]") {
  AdmissionMetrics m;
  m.RecordRequest(Webhook::kValidateDeployment, "CREATE", true, 200, microseconds(50));
  m.RecordRequest(Webhook::kValidateDeployment, "CREATE", true, 200, microseconds(70));
  m.RecordRequest(Webhook::kValidateDeployment, "UPDATE", false, 422, microseconds(300));
  m.RecordRequest(Webhook::kMutatePod, "", false, 400, microseconds(10));
  m.RecordRequest(Webhook::kMutateDeployment, "CREATE", false, 418, microseconds(10));
  const std::string text = m.RenderPrometheus();
  CHECK(Has(text, "# TYPE wasd_admission_requests_total counter"));
  CHECK(Has(text,
            "wasd_admission_requests_total{webhook=\"validate-deployment\",operation=\"CREATE\","
            "allowed=\"true\",code=\"200\"} 2"));
  CHECK(Has(text,
            "wasd_admission_requests_total{webhook=\"validate-deployment\",operation=\"UPDATE\","
            "allowed=\"false\",code=\"422\"} 1"));
  CHECK(Has(text,
            "wasd_admission_requests_total{webhook=\"mutate-pod\",operation=\"unknown\","
            "allowed=\"false\",code=\"400\"} 1"));
  // A code outside the fixed table still counts.
  CHECK(Has(text,
            "wasd_admission_requests_total{webhook=\"mutate-deployment\",operation=\"CREATE\","
            "allowed=\"false\",code=\"418\"} 1"));
  // Series never seen are not rendered.
  CHECK(text.find("operation=\"DELETE\"") == std::string::npos);
}

TEST_CASE("latency histogram is cumulative with sub-millisecond buckets", "[unit][server]") {
  AdmissionMetrics m;
  m.RecordRequest(Webhook::kMutatePod, "CREATE", true, 200, microseconds(50));         // <= 0.0001
  m.RecordRequest(Webhook::kMutatePod, "CREATE", true, 200, microseconds(100));        // <= 0.0001
  m.RecordRequest(Webhook::kMutatePod, "CREATE", true, 200, microseconds(400));        // <= 0.0005
  m.RecordRequest(Webhook::kMutatePod, "CREATE", true, 200, std::chrono::seconds(2));  // +Inf
  const std::string text = m.RenderPrometheus();
  CHECK(Has(text, "# TYPE wasd_admission_request_duration_seconds histogram"));
  CHECK(Has(
      text,
      "wasd_admission_request_duration_seconds_bucket{webhook=\"mutate-pod\",le=\"0.0001\"} 2"));
  CHECK(Has(
      text,
      "wasd_admission_request_duration_seconds_bucket{webhook=\"mutate-pod\",le=\"0.00025\"} 2"));
  CHECK(Has(
      text,
      "wasd_admission_request_duration_seconds_bucket{webhook=\"mutate-pod\",le=\"0.0005\"} 3"));
  CHECK(Has(text,
            "wasd_admission_request_duration_seconds_bucket{webhook=\"mutate-pod\",le=\"1\"} 3"));
  CHECK(
      Has(text,
          "wasd_admission_request_duration_seconds_bucket{webhook=\"mutate-pod\",le=\"+Inf\"} 4"));
  CHECK(Has(text, "wasd_admission_request_duration_seconds_count{webhook=\"mutate-pod\"} 4"));
  CHECK(Has(text, "wasd_admission_request_duration_seconds_sum{webhook=\"mutate-pod\"} 2.00055"));
  // Every webhook has a histogram, even before traffic.
  CHECK(Has(text,
            "wasd_admission_request_duration_seconds_count{webhook=\"validate-deployment\"} 0"));
}

TEST_CASE("gauges", "[unit][server]") {
  AdmissionMetrics m;
  m.AddInFlight(3);
  m.AddInFlight(-1);
  m.SetCertificateExpiry(1893456000);
  const std::string text = m.RenderPrometheus();
  CHECK(Has(text, "# TYPE wasd_admission_in_flight_requests gauge"));
  CHECK(Has(text, "wasd_admission_in_flight_requests 2"));
  CHECK(Has(text, "# TYPE wasd_tls_certificate_expiry_timestamp_seconds gauge"));
  CHECK(Has(text, "wasd_tls_certificate_expiry_timestamp_seconds 1893456000"));
}

TEST_CASE("latency buckets reach 10 s, past the chart's 3 s timeout", "[unit][server]") {
  AdmissionMetrics m;
  m.RecordRequest(Webhook::kValidateDeployment, "UPDATE", true, 200,
                  std::chrono::milliseconds(2900));
  m.RecordRequest(Webhook::kValidateDeployment, "UPDATE", true, 200, std::chrono::seconds(7));
  m.RecordRequest(Webhook::kValidateDeployment, "UPDATE", true, 200, std::chrono::seconds(11));
  const std::string text = m.RenderPrometheus();
  const std::string b =
      "wasd_admission_request_duration_seconds_bucket{webhook=\"validate-deployment\",le=";
  CHECK(Has(text, b + "\"2.5\"} 0"));
  CHECK(Has(text, b + "\"5\"} 1"));
  CHECK(Has(text, b + "\"10\"} 2"));
  CHECK(Has(text, b + "\"+Inf\"} 3"));
  CHECK(AdmissionMetrics::kBucketBounds.back() == 10.0);
}

TEST_CASE("denials by rule: every id rendered, one count per distinct rule", "[unit][server]") {
  using workloadbuilder::RuleId;
  AdmissionMetrics m;
  m.RecordDenial({RuleId::kH1, RuleId::kH2});
  m.RecordDenial({RuleId::kH1});
  m.RecordDenial({RuleId::kOther});
  const std::string text = m.RenderPrometheus();
  CHECK(Has(text, "# TYPE wasd_admission_denials_total counter"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"H1\"} 2"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"H2\"} 1"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"other\"} 1"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"U9\"} 0"));
  std::size_t series = 0;
  for (std::size_t at = text.find("\nwasd_admission_denials_total{"); at != std::string::npos;
       at = text.find("\nwasd_admission_denials_total{", at + 1)) {
    ++series;
  }
  CHECK(series == rules::kRuleIds.size());
}

// The label comes from the ids the rules set on their errors: a real
// AdmissionReview (the gang Deployment with replicas 2 < minCount 4 and a
// RollingUpdate strategy) through admission::Review, its summary recorded as
// the session records it.
TEST_CASE("a real denial is counted under the rules its errors carry", "[unit][server]") {
  std::ifstream in(std::string(WASD_TESTDATA) + "/bench/deploy-create-gang-invalid.json");
  REQUIRE(in);
  const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const admission::Result r =
      admission::Review(Webhook::kValidateDeployment, body, admission::Options{});
  REQUIRE(r.summary.code == 422);
  AdmissionMetrics m;
  m.RecordDenial(r.summary.denied_rules);
  const std::string text = m.RenderPrometheus();
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"H1\"} 1"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"H2\"} 1"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"S4\"} 0"));
  CHECK(Has(text, "wasd_admission_denials_total{rule=\"other\"} 0"));
}

TEST_CASE("process metrics and build info follow", "[unit][server]") {
  const std::string text = AdmissionMetrics().RenderPrometheus();
  CHECK(Has(text, "# TYPE process_resident_memory_bytes gauge"));
  CHECK(Has(text, "# TYPE process_cpu_seconds_total counter"));
  CHECK(text.find("\nwasd_build_info{version=\"") != std::string::npos);
}

TEST_CASE("every line is a comment or a sample", "[unit][server]") {
  AdmissionMetrics m;
  m.RecordRequest(Webhook::kValidateDeployment, "DELETE", true, 200, microseconds(1));
  const std::string text = m.RenderPrometheus();
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    INFO(line);
    CHECK(!line.empty());
    const bool ours = line.rfind("# HELP wasd_", 0) == 0 || line.rfind("# TYPE wasd_", 0) == 0 ||
                      line.rfind("wasd_", 0) == 0;
    const bool process = line.rfind("# HELP process_", 0) == 0 ||
                         line.rfind("# TYPE process_", 0) == 0 || line.rfind("process_", 0) == 0;
    CHECK((ours || process));
    start = end + 1;
  }
}

}  // namespace
}  // namespace wasd::server
