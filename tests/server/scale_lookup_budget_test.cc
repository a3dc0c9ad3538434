// Issue 30 L4: the bounds on deployments/scale lookups: the pending-lookup
// budget, the review deadline read from the `timeout` query parameter, and
// the metrics that report both.
#include "server/scale_lookup_budget.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "server/admission_metrics.h"

namespace wasd::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST_CASE("the budget hands out at most `limit` places", "[unit][server]") {
  ScaleLookupBudget budget(2);
  CHECK(budget.limit() == 2);
  CHECK(budget.TryAcquire());
  CHECK(budget.TryAcquire());
  CHECK(budget.pending() == 2);
  CHECK_FALSE(budget.TryAcquire());  // full: nothing taken
  CHECK(budget.pending() == 2);
  budget.Release();
  CHECK(budget.TryAcquire());
  CHECK_FALSE(budget.TryAcquire());
  budget.Release();
  budget.Release();
  CHECK(budget.pending() == 0);
}

TEST_CASE("the review timeout from the query string, as Go writes durations", "[unit][server]") {
  CHECK(ParseRequestTimeout("/validate-apps-v1-deployment?timeout=10s") == seconds(10));
  CHECK(ParseRequestTimeout("/validate-apps-v1-deployment?timeout=3s") == seconds(3));
  CHECK(ParseRequestTimeout("/p?timeout=2.5s") == milliseconds(2500));
  CHECK(ParseRequestTimeout("/p?timeout=1m0s") == seconds(60));
  CHECK(ParseRequestTimeout("/p?timeout=500ms") == milliseconds(500));
  CHECK(ParseRequestTimeout("/p?timeout=1ns") == nanoseconds(1));
  CHECK(ParseRequestTimeout("/p?timeout=1h") == seconds(3600));
  CHECK(ParseRequestTimeout("/p?timeout=250us") == std::chrono::microseconds(250));
  CHECK(ParseRequestTimeout("/p?a=b&timeout=4s&c") == seconds(4));
  // None, or nothing a duration: no deadline from the request.
  for (const char* target :
       {"/p", "/p?", "/p?timeout", "/p?timeout=", "/p?timeout=10", "/p?timeout=s", "/p?timeout=10x",
        "/p?timeout=-1s", "/p?timeout=0s", "/p?timeout=.s", "/p?timeout=1.2.3s", "/p?timeouts=1s",
        "/p?timeout=99999h"}) {
    INFO(target);
    CHECK_FALSE(ParseRequestTimeout(target).has_value());
  }
  CHECK_FALSE(ParseRequestTimeout("/p?timeout=" + std::string(100, '1') + "s").has_value());
}

TEST_CASE("the lookup metrics: pending gauge and refusals by reason", "[unit][server]") {
  AdmissionMetrics m;
  std::string text = m.RenderPrometheus();
  // Present from the start, at 0.
  CHECK(text.find("# TYPE wasd_admission_scale_lookups_pending gauge") != std::string::npos);
  CHECK(text.find("\nwasd_admission_scale_lookups_pending 0\n") != std::string::npos);
  CHECK(text.find("wasd_admission_scale_lookups_refused_total{reason=\"busy\"} 0") !=
        std::string::npos);
  CHECK(text.find("wasd_admission_scale_lookups_refused_total{reason=\"expired\"} 0") !=
        std::string::npos);
  m.AddPendingLookups(2);
  m.RecordLookupRefused(AdmissionMetrics::LookupRefusal::kBusy);
  m.RecordLookupRefused(AdmissionMetrics::LookupRefusal::kBusy);
  m.RecordLookupRefused(AdmissionMetrics::LookupRefusal::kExpired);
  text = m.RenderPrometheus();
  CHECK(text.find("\nwasd_admission_scale_lookups_pending 2\n") != std::string::npos);
  CHECK(text.find("wasd_admission_scale_lookups_refused_total{reason=\"busy\"} 2") !=
        std::string::npos);
  CHECK(text.find("wasd_admission_scale_lookups_refused_total{reason=\"expired\"} 1") !=
        std::string::npos);
}

}  // namespace
}  // namespace wasd::server
