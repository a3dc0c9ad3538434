// Test helpers shared by the workloadbuilder and rules unit tests: matching a
// FieldErrorList by (type, path) — the style guide keeps message wording to a
// few golden tests — and loading fixtures from tests/testdata.
#ifndef WASD_TESTS_WORKLOADBUILDER_ERROR_MATCHERS_H_
#define WASD_TESTS_WORKLOADBUILDER_ERROR_MATCHERS_H_

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "workloadbuilder/field_error.h"

namespace wasd::testing {

using ExpectedError = std::pair<workloadbuilder::ErrorType, std::string>;
using ExpectedErrors = std::vector<ExpectedError>;

inline std::string Describe(const workloadbuilder::FieldErrorList& errors) {
  std::string out;
  for (const auto& e : errors) out += "  " + e.ToString() + "\n";
  return out.empty() ? "  (no errors)\n" : out;
}

inline std::string Describe(const ExpectedErrors& expected) {
  std::string out;
  for (const auto& [type, path] : expected) {
    out += "  " + path + ": " + std::string(workloadbuilder::ErrorTypeText(type)) + "\n";
  }
  return out.empty() ? "  (no errors)\n" : out;
}

// True when `errors` holds exactly the (type, path) pairs of `expected`, as a
// multiset (order-insensitive, duplicates counted).
inline bool SameErrors(const workloadbuilder::FieldErrorList& errors, ExpectedErrors expected) {
  std::vector<ExpectedError> got;
  for (const auto& e : errors) got.emplace_back(e.type, e.path.String());
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  return got == expected;
}

// Asserts SameErrors, printing both lists on failure.
#define WASD_REQUIRE_ERRORS(errors, ...)                                \
  do {                                                                  \
    const ::wasd::testing::ExpectedErrors wasd_expected_ = __VA_ARGS__; \
    INFO("got:\n"                                                       \
         << ::wasd::testing::Describe(errors) << "expected:\n"          \
         << ::wasd::testing::Describe(wasd_expected_));                 \
    REQUIRE(::wasd::testing::SameErrors(errors, wasd_expected_));       \
  } while (false)

inline std::string ReadTestFile(const std::string& relative) {
  std::ifstream in(std::string(WASD_TESTDATA) + "/" + relative, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json LoadJson(const std::string& relative) {
  return nlohmann::json::parse(ReadTestFile(relative));
}

}  // namespace wasd::testing

#endif  // WASD_TESTS_WORKLOADBUILDER_ERROR_MATCHERS_H_
