#include "workloadbuilder/field_error.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace wb = wasd::workloadbuilder;

TEST_CASE("GoQuote escapes like Go's strconv.Quote", "[unit]") {
  CHECK(wb::GoQuote("abc") == "\"abc\"");
  CHECK(wb::GoQuote("") == "\"\"");
  CHECK(wb::GoQuote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(wb::GoQuote("line\nnext\ttab") == "\"line\\nnext\\ttab\"");
  CHECK(wb::GoQuote(std::string("\x01", 1)) == "\"\\x01\"");
  CHECK(wb::GoQuote("\x7f") == "\"\\x7f\"");
  CHECK(wb::GoQuote("z\xc3\xa9") == "\"z\xc3\xa9\"");  // valid UTF-8 stays as is
  CHECK(wb::GoQuote("\xff") == "\"\\xff\"");           // invalid byte escaped
}

TEST_CASE("FieldError renders type words, values and details", "[unit]") {
  const wb::FieldPath p = wb::FieldPath::Parse("spec.x");
  CHECK(wb::Required(p).ToString() == "spec.x: Required value");
  CHECK(wb::Forbidden(p, "nope").ToString() == "spec.x: Forbidden: nope");
  CHECK(wb::Invalid(p, "v", "bad").ToString() == "spec.x: Invalid value: \"v\": bad");
  CHECK(wb::Invalid(p, 3, "bad").ToString() == "spec.x: Invalid value: 3: bad");
  CHECK(wb::Invalid(p, true, "bad").ToString() == "spec.x: Invalid value: true: bad");
  CHECK(wb::Invalid(p, nullptr, "field is immutable").ToString() ==
        "spec.x: Invalid value: \"null\": field is immutable");
  CHECK(wb::TooMany(p, 5, 4).ToString() == "spec.x: Too many: 5: must have at most 4 items");
  CHECK(wb::Duplicate(p, nlohmann::json{{"name", "a"}}).ToString() ==
        "spec.x: Duplicate value: {\"name\":\"a\"}");
  CHECK(wb::NotSupported(p, "x", {"A", "B"}).ToString() ==
        "spec.x: Unsupported value: \"x\": supported values: \"A\", \"B\"");
  CHECK(wb::Invalid(p, "v", "bad").Body() == "Invalid value: \"v\": bad");
  CHECK(wb::ErrorTypeReason(wb::ErrorType::kInvalid) == "FieldValueInvalid");
}

TEST_CASE("AggregateMessage: one alone, several in brackets, duplicates once", "[unit]") {
  const wb::FieldPath p = wb::FieldPath::Parse("spec.a");
  const wb::FieldPath q = wb::FieldPath::Parse("spec.b");
  CHECK(wb::AggregateMessage({}).empty());
  CHECK(wb::AggregateMessage({wb::Required(p)}) == "spec.a: Required value");
  CHECK(wb::AggregateMessage({wb::Required(p), wb::Forbidden(q), wb::Required(p)}) ==
        "[spec.a: Required value, spec.b: Forbidden]");
}

TEST_CASE("AggregateMessageOf drops repeats in short and long lists alike", "[unit]") {
  CHECK(wb::AggregateMessageOf({}).empty());
  CHECK(wb::AggregateMessageOf({"a: x"}) == "a: x");
  CHECK(wb::AggregateMessageOf({"a: x", "a: x"}) == "a: x");
  CHECK(wb::AggregateMessageOf({"a: x", "b: y", "a: x"}) == "[a: x, b: y]");
  for (const std::size_t n : {15, 16, 17, 40}) {
    wb::FieldErrorList errors;
    std::vector<std::string> messages;
    for (std::size_t i = 0; i < n; ++i) {
      errors.push_back(wb::Required(wb::FieldPath().Index(i % 7)));
      messages.push_back(errors.back().ToString());
    }
    INFO(n << " messages");
    CHECK(wb::AggregateMessageOf(messages) == wb::AggregateMessage(errors));
    CHECK(wb::AggregateMessage(errors) ==
          "[[0]: Required value, [1]: Required value, [2]: Required value, [3]: Required value, "
          "[4]: Required value, [5]: Required value, [6]: Required value]");
  }
}
