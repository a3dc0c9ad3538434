#include "metrics/exposition.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

namespace wasd::metrics {
namespace {

std::string Number(double v) {
  std::string out;
  AppendNumber(&out, v);
  return out;
}

TEST_CASE("numbers are shortest exact fixed-point", "[unit]") {
  CHECK(Number(0.0001) == "0.0001");
  CHECK(Number(0.00025) == "0.00025");
  CHECK(Number(0.1) == "0.1");
  CHECK(Number(1) == "1");
  CHECK(Number(2.5) == "2.5");
  CHECK(Number(10) == "10");
  CHECK(Number(1764633600.25) == "1764633600.25");
  CHECK(Number(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(Number(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(Number(std::nan("")) == "NaN");
}

TEST_CASE("label values are escaped", "[unit]") {
  std::string out;
  AppendLabelValue(&out, "a\"b\\c\nd");
  CHECK(out == "a\\\"b\\\\c\\nd");
}

TEST_CASE("histogram buckets are cumulative, le last, +Inf equals count", "[unit]") {
  Histogram h({0.1, 1, 10});
  h.Observe(0.05);
  h.Observe(0.1);  // on the bound: in that bucket
  h.Observe(3);
  h.Observe(100);
  std::string out;
  h.Render(&out, "x_seconds", "controller=\"wasd\"");
  CHECK(out ==
        "x_seconds_bucket{controller=\"wasd\",le=\"0.1\"} 2\n"
        "x_seconds_bucket{controller=\"wasd\",le=\"1\"} 2\n"
        "x_seconds_bucket{controller=\"wasd\",le=\"10\"} 3\n"
        "x_seconds_bucket{controller=\"wasd\",le=\"+Inf\"} 4\n"
        "x_seconds_sum{controller=\"wasd\"} 103.15\n"
        "x_seconds_count{controller=\"wasd\"} 4\n");
  CHECK(h.count() == 4);
  std::string bare;
  Histogram(std::vector<double>{1}).Render(&bare, "y", "");
  CHECK(bare == "y_bucket{le=\"1\"} 0\ny_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n");
}

TEST_CASE("header and sample lines", "[unit]") {
  std::string out;
  AppendHeader(&out, "a_total", "counter", "Things.");
  AppendSample(&out, "a_total", "", 3);
  CHECK(out == "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n");
}

}  // namespace
}  // namespace wasd::metrics
