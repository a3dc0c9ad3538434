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
  CHECK_FALSE(wb::ParseConfigText("a: b\xff\n").ok());       // invalid UTF-8
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
  for (int i = 0; i < 100; ++i)
    yaml_block += std::string(static_cast<std::size_t>(i) * 2, ' ') + "a:\n";
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

// ---------------------------------------------------------------- issue 11

TEST_CASE("Text over 256 KiB is refused before any parse (TooLong)", "[unit]") {
  CHECK(wb::kMaxConfigTextBytes == 262144);  // kube-apiserver's TotalAnnotationSizeLimitB
  // Text that would otherwise parse (a plain scalar), and text that would
  // fail in the parser (nesting): both are refused for their size alone.
  for (const char fill : {'a', '['}) {
    INFO("fill " << fill);
    const wb::ParsedText over = wb::ParseConfigText(std::string(wb::kMaxConfigTextBytes + 1, fill));
    CHECK(over.kind == wb::TextError::kTooLong);
    CHECK(over.error == "must have at most 262144 bytes");
    CHECK(over.value.is_null());
  }
  const wb::ParsedText at_limit = wb::ParseConfigText(std::string(wb::kMaxConfigTextBytes, 'a'));
  CHECK(at_limit.ok());
  // Other callers (wasd check's manifest documents) may allow more.
  wb::TextOptions manifest;
  manifest.max_bytes = std::size_t{1} << 20;
  CHECK(wb::ParseConfigText(std::string(wb::kMaxConfigTextBytes + 1, 'a'), manifest).ok());
}

TEST_CASE("Repeated keys are refused in JSON and YAML, naming the key and its path", "[unit]") {
  struct Case {
    const char* text;
    const char* key;
    const char* where;
  };
  const Case cases[] = {
      {R"({"schedulingPolicy":{"gang":{"minCount":2}},"schedulingPolicy":{"basic":{}}})",
       "schedulingPolicy", "schedulingPolicy"},
      {"schedulingPolicy:\n  gang:\n    minCount: 2\nschedulingPolicy:\n  basic: {}\n",
       "schedulingPolicy", "schedulingPolicy"},
      {R"({"schedulingPolicy":{"gang":{"minCount":2,"minCount":3}}})", "minCount",
       "schedulingPolicy.gang.minCount"},
      {"schedulingPolicy: {gang: {minCount: 2, minCount: 3}}\n", "minCount",
       "schedulingPolicy.gang.minCount"},
      {R"({"resourceClaims":[{"name":"a"},{"name":"b","name":"c"}]})", "name",
       "resourceClaims[1].name"},
      {"resourceClaims:\n- name: a\n- name: b\n  name: c\n", "name", "resourceClaims[1].name"},
      // YAML keys compare as text, whatever their quoting.
      {"a: 1\n\"a\": 2\n", "a", "a"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const wb::ParsedText p = wb::ParseConfigText(c.text);
    CHECK(p.kind == wb::TextError::kDuplicateKey);
    CHECK(p.key == c.key);
    CHECK(p.where.String() == c.where);
    CHECK(p.value.is_null());
    CHECK(p.error == std::string("duplicate key \"") + c.key + "\"");
  }
  // The same key in different objects is fine.
  CHECK(wb::ParseConfigText(R"({"a":{"x":1},"b":{"x":2}})").ok());
  CHECK(wb::ParseConfigText("a: {x: 1}\nb: {x: 2}\n").ok());
}

TEST_CASE("Worst-case YAML shapes are refused by their structure", "[unit]") {
  const std::size_t n = 100000;
  auto repeat = [](const std::string& unit, std::size_t times) {
    std::string s;
    s.reserve(unit.size() * times);
    for (std::size_t i = 0; i < times; ++i) s += unit;
    return s;
  };
  struct Case {
    std::string name, text, reason;
  };
  const Case cases[] = {
      {"flow sequences", std::string(n, '['), "nests deeper than 64 levels"},
      {"flow sequences after a key", "x: " + std::string(n, '['), "nests deeper than 64 levels"},
      {"flow mappings", repeat("{a: ", n / 4), "nests deeper than 64 levels"},
      {"block sequences on one line", repeat("- ", n / 2) + "x\n", "nests deeper than 64 levels"},
      {"indented mappings",
       [&] {
         std::string s;
         for (int i = 0; i < 100; ++i) s += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
         return s;
       }(),
       "nests deeper than 64 levels"},
      {"JSON nesting", std::string(n, '[') + std::string(n, ']'), "nests deeper than 64 levels"},
      {"many values", "[" + repeat("1,", n / 2) + "1]", "values"},
      {"many block values", repeat("- 1\n", n / 4), "nodes"},
      {"many anchors", "[" + repeat("&a 1, ", 200) + "1]", "anchors"},
      {"many aliases", "a: &a 1\nb: [" + repeat("*a, ", 2000) + "*a]\n", "aliases"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const wb::ParsedText p = wb::ParseConfigText(c.text);
    CHECK_FALSE(p.ok());
    CHECK(p.kind == wb::TextError::kInvalid);
    CHECK(p.error.find(c.reason) != std::string::npos);
  }
}

TEST_CASE("YAML features the limits must not break", "[unit]") {
  // Anchors and aliases within the limits, merge-key syntax parsed (refused
  // later as an unknown field), block scalars with brackets, quoted brackets,
  // comments, flow mappings in block sequences: all parse.
  const char* texts[] = {
      "base: &b {gang: {minCount: 2}}\nschedulingPolicy: *b\n",
      "a: &a {x: 1}\nb:\n  <<: *a\n  y: 2\n",
      "note: |\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nx: 1\n",
      "note: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n",
      "note: '{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{'\n",
      "# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nx: 1\n",
      "resourceClaims:\n- {name: a, resourceClaimName: c}\n- name: b\n  resourceClaimTemplateName: "
      "t\n",
      "a:\n- x\n- y\nb: 1\n",
  };
  for (const char* t : texts) {
    INFO(t);
    const wb::ParsedText p = wb::ParseConfigText(t);
    CHECK(p.ok());
    CHECK(p.error.empty());
  }
  CHECK(wb::ParseConfigText("base: &b {gang: {minCount: 2}}\nschedulingPolicy: *b\n")
            .value.at("schedulingPolicy") == json::parse(R"({"gang":{"minCount":2}})"));
  // Aliases of scalars, as values and as keys; an anchor on a key.
  CHECK(wb::ParseConfigText("a: &n 5\nb: *n\nc: &s zone\n*s : 1\n&k d: 2\ne: *k\n").value ==
        json::parse(R"({"a":5,"b":5,"c":"zone","zone":1,"d":2,"e":"d"})"));
  // 64 levels of block nesting are allowed, 65 are not.
  auto nested = [](int levels) {
    std::string s;
    for (int i = 0; i < levels - 1; ++i)
      s += std::string(static_cast<std::size_t>(i) * 2, ' ') + "a:\n";
    return s + std::string(static_cast<std::size_t>(levels - 1) * 2, ' ') + "a: 1\n";
  };
  CHECK(wb::ParseConfigText(nested(64)).ok());
  CHECK_FALSE(wb::ParseConfigText(nested(65)).ok());
}
