#include "workloadbuilder/config_text.h"

#include <string>

#include <catch2/catch.hpp>

#include "tests/workloadbuilder/error_matchers.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;

TEST_CASE("ParseConfigText reads JSON", "[unit]") {
  const wb::ParsedText p = wb::ParseConfigText(R"({"schedulingPolicy":{"gang":{"minCount":3}}})");
  REQUIRE(p.ok());
  CHECK(p.value == json::parse(R"({"schedulingPolicy":{"gang":{"minCount":3}}})"));
  CHECK(p.value["schedulingPolicy"]["gang"]["minCount"].is_number_integer());
}

TEST_CASE("ParseConfigText reads the KEP example as YAML", "[unit]") {
  const wb::ParsedText p =
      wb::ParseConfigText(wasd::testing::ReadTestFile("workloadbuilder/annotation-example-1.yaml"));
  REQUIRE(p.ok());
  CHECK(p.value == json::parse(R"({"schedulingPolicy":{"gang":{}},
      "schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]},
      "disruptionMode":{"all":{}}})"));
}

TEST_CASE("YAML scalars convert carefully", "[unit]") {
  const wb::ParsedText p = wb::ParseConfigText(
      "int: 3\nneg: -4\nhex: 0x1F\noct: 0o17\nquoted: \"3\"\nsingle: '5'\nt: true\nf: False\n"
      "yes_word: yes\nnull1: ~\nnull2: null\nnull3:\nfloat: 2.5\nexp: 1e3\nstr: zone\n"
      "tagged: !!str 7\ntagged_int: !!int \"8\"\nlong: 99999999999\n");
  REQUIRE(p.ok());
  const json& v = p.value;
  CHECK(v.at("int") == 3);
  CHECK(v.at("int").is_number_integer());
  CHECK(v.at("neg") == -4);
  CHECK(v.at("hex") == 31);
  CHECK(v.at("oct") == 15);
  CHECK(v.at("quoted") == "3");
  CHECK(v.at("single") == "5");
  CHECK(v.at("t") == true);
  CHECK(v.at("f") == false);
  CHECK(v.at("yes_word") == "yes");
  CHECK(v.at("null1").is_null());
  CHECK(v.at("null2").is_null());
  CHECK(v.at("null3").is_null());
  CHECK(v.at("float").is_number_float());
  CHECK(v.at("float") == 2.5);
  CHECK(v.at("exp") == 1000.0);
  CHECK(v.at("str") == "zone");
  CHECK(v.at("tagged") == "7");
  CHECK(v.at("tagged_int") == 8);
  CHECK(v.at("long") == 99999999999LL);
}

TEST_CASE("ParseConfigText reports bad input without throwing", "[unit]") {
  CHECK(wb::ParseConfigText("").error == "must not be empty");
  CHECK(wb::ParseConfigText(" \n\t").error == "must not be empty");
  const wb::ParsedText broken = wb::ParseConfigText("{\"a\": [1, 2");
  CHECK_FALSE(broken.ok());
  CHECK(broken.error.rfind("not valid JSON or YAML", 0) == 0);
  CHECK(broken.value.is_null());
  CHECK_FALSE(wb::ParseConfigText("a: 1\n---\nb: 2\n").ok());
  CHECK_FALSE(wb::ParseConfigText("a: !custom 1\n").ok());
  CHECK_FALSE(wb::ParseConfigText("a: !!int abc\n").ok());
  CHECK_FALSE(wb::ParseConfigText("? [a, b]\n: 1\n").ok());  // non-scalar key
  CHECK_FALSE(wb::ParseConfigText("a: b\xff\n").ok());  // invalid UTF-8
  // A scalar document parses; deciding that it is not an object is the caller's job.
  CHECK(wb::ParseConfigText("gang").value == "gang");
}

TEST_CASE("Deep nesting is bounded for JSON and YAML", "[unit]") {
  const int deep = 100000;
  const std::string json_text = std::string(deep, '[') + std::string(deep, ']');
  CHECK_FALSE(wb::ParseConfigText(json_text).ok());
  const std::string unterminated = std::string(deep, '[');  // falls through to YAML
  CHECK_FALSE(wb::ParseConfigText(unterminated).ok());
  std::string yaml_block;
  for (int i = 0; i < 100; ++i) yaml_block += std::string(static_cast<std::size_t>(i) * 2, ' ') + "a:\n";
  CHECK_FALSE(wb::ParseConfigText(yaml_block).ok());
  CHECK_FALSE(wb::ParseConfigText(std::string(70, '[') + std::string(70, ']')).ok());
  CHECK(wb::ParseConfigText(std::string(60, '[') + std::string(60, ']')).ok());
}

TEST_CASE("YAML alias expansion is bounded (billion laughs)", "[unit]") {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'h'; ++c) {
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) text += std::string(i ? ", *" : "*") + prev;
    text += "]\n";
    prev = c;
  }
  const wb::ParsedText p = wb::ParseConfigText(text);
  CHECK_FALSE(p.ok());
  CHECK(p.error.find("values") != std::string::npos);
}
