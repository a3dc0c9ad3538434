#include "workloadbuilder/scheduling_config.h"

#include <catch2/catch.hpp>

#include "tests/workloadbuilder/error_matchers.h"

namespace wb = wasd::workloadbuilder;
using nlohmann::json;
using wb::ErrorType;

namespace {

const std::string kAnn = "metadata.annotations[wasd.io/scheduling]";

json WithAnnotation(const json& text) {
  return json{{"metadata", {{"name", "d"}, {"annotations", {{"wasd.io/scheduling", text}}}}},
              {"spec", {{"replicas", 3}}}};
}

}  // namespace

TEST_CASE("No carrier: nothing to read", "[unit]") {
  for (const json& d : {json(nullptr), json::array(), json{{"spec", {{"replicas", 1}}}},
                        json{{"metadata", {{"annotations", {{"other", "x"}}}}}},
                        json{{"spec", {{"scheduling", nullptr}}}}}) {
    const wb::SchedulingConfig c = wb::ReadSchedulingConfig(d);
    CHECK_FALSE(c.present());
    CHECK(c.errors.empty());
    CHECK_FALSE(wb::HasSchedulingCarrier(d));
  }
}

TEST_CASE("spec.scheduling is not wasd's carrier (Q22), only read to be judged", "[unit]") {
  const json d = {{"spec", {{"scheduling", {{"schedulingPolicy", {{"gang", json::object()}}}}}}}};
  // wasd's carrier: the annotation alone.
  CHECK_FALSE(wb::ReadSchedulingConfig(d).present());
  CHECK_FALSE(wb::HasSchedulingCarrier(d));
  CHECK(wb::HasInTreeScheduling(d));
  // The in-tree integration's configuration, for the KEP's rules.
  const wb::SchedulingConfig c = wb::ReadInTreeSchedulingConfig(d);
  CHECK(c.carrier == wb::Carrier::kField);
  CHECK(c.path.String() == "spec.scheduling");
  CHECK(c.usable());
  CHECK(c.config == d["spec"]["scheduling"]);
  // Null is absent, as the API server drops it.
  CHECK_FALSE(wb::HasInTreeScheduling(json{{"spec", {{"scheduling", nullptr}}}}));
  CHECK_FALSE(wb::ReadInTreeSchedulingConfig(json{{"spec", {{"replicas", 1}}}}).present());
}

TEST_CASE("Annotation carrier, JSON and YAML", "[unit]") {
  for (const char* text : {R"({"schedulingPolicy":{"gang":{"minCount":2}}})",
                           "schedulingPolicy:\n  gang:\n    minCount: 2\n"}) {
    DYNAMIC_SECTION("text " << json(text).dump()) {
      const wb::SchedulingConfig c = wb::ReadSchedulingConfig(WithAnnotation(text));
      CHECK(c.carrier == wb::Carrier::kAnnotation);
      CHECK(c.path.String() == kAnn);
      REQUIRE(c.usable());
      CHECK(c.config == json::parse(R"({"schedulingPolicy":{"gang":{"minCount":2}}})"));
      CHECK(c.errors.empty());
    }
  }
}

TEST_CASE("Broken annotations are Invalid at the annotation path", "[unit]") {
  for (const json& text : {json(""), json("   "), json("[1, 2]"), json("\"gang\""), json("{bad"),
                           json("42"), json(7), json::object(), json(true)}) {
    DYNAMIC_SECTION("annotation " << text.dump()) {
      INFO(text.dump());
      const wb::SchedulingConfig c = wb::ReadSchedulingConfig(WithAnnotation(text));
      CHECK(c.present());
      CHECK_FALSE(c.usable());
      WASD_REQUIRE_ERRORS(c.errors, {{ErrorType::kInvalid, kAnn}});
    }
  }
}

TEST_CASE("Broken annotation message text", "[unit]") {
  CHECK(wb::AggregateMessage(wb::ReadSchedulingConfig(WithAnnotation("")).errors) ==
        kAnn + ": Invalid value: \"\": must not be empty");
  CHECK(wb::AggregateMessage(wb::ReadSchedulingConfig(WithAnnotation("[1]")).errors) ==
        kAnn + ": Invalid value: \"[1]\": must be a JSON or YAML object");
  const std::string long_text(1000, 'x');
  const std::string msg =
      wb::AggregateMessage(wb::ReadSchedulingConfig(WithAnnotation(long_text)).errors);
  CHECK(msg.size() < 300);  // the echoed value is cut
  const std::string accented = std::string(199, 'x') + "\xc3\xa9" + std::string(100, 'y');
  const std::string cut =
      wb::AggregateMessage(wb::ReadSchedulingConfig(WithAnnotation(accented)).errors);
  CHECK(cut.find("\\x") == std::string::npos);  // no UTF-8 sequence split in half
  CHECK(cut.find(std::string(199, 'x') + "...") != std::string::npos);
}

TEST_CASE("With both, each reader reads its own (the rules deny the pair: H5)", "[unit]") {
  json d = WithAnnotation("schedulingPolicy:\n  gang: {}\n");
  d["spec"]["scheduling"] = {{"schedulingPolicy", {{"basic", json::object()}}}};
  const wb::SchedulingConfig wasd = wb::ReadSchedulingConfig(d);
  CHECK(wasd.carrier == wb::Carrier::kAnnotation);
  CHECK(wasd.path.String() == kAnn);
  CHECK(wasd.errors.empty());
  CHECK(wasd.config == json::parse(R"({"schedulingPolicy":{"gang":{}}})"));
  const wb::SchedulingConfig in_tree = wb::ReadInTreeSchedulingConfig(d);
  CHECK(in_tree.carrier == wb::Carrier::kField);
  CHECK(in_tree.config == d["spec"]["scheduling"]);
}

TEST_CASE("Wrong JSON types around the carriers never throw", "[unit]") {
  const json odd[] = {
      json{{"metadata", 5}},
      json{{"metadata", {{"annotations", "x"}}}},
      json{{"metadata", {{"annotations", json::array()}}}},
      json{{"spec", "x"}},
      json{{"spec", {{"scheduling", 5}}}},
      json{{"spec", {{"scheduling", json::array()}}}},
  };
  for (const json& d : odd) {
    INFO(d.dump());
    CHECK_NOTHROW(wb::ReadSchedulingConfig(d));
    CHECK_NOTHROW(wb::HasSchedulingCarrier(d));
    CHECK_NOTHROW(wb::ReadInTreeSchedulingConfig(d));
    CHECK_NOTHROW(wb::HasInTreeScheduling(d));
  }
  const wb::SchedulingConfig c =
      wb::ReadInTreeSchedulingConfig(json{{"spec", {{"scheduling", 5}}}});
  WASD_REQUIRE_ERRORS(c.errors, {{ErrorType::kInvalid, "spec.scheduling"}});
}

TEST_CASE("An annotation over 256 KiB is TooLong, a repeated key Duplicate", "[unit]") {
  const wb::SchedulingConfig too_long =
      wb::ReadSchedulingConfig(WithAnnotation(std::string(262145, '[')));
  WASD_REQUIRE_ERRORS(too_long.errors, {{ErrorType::kTooLong, kAnn}});
  CHECK(too_long.errors[0].ToString() == kAnn + ": Too long: must have at most 262144 bytes");
  CHECK_FALSE(too_long.usable());
  for (const char* text :
       {R"({"schedulingPolicy":{"gang":{"minCount":2}},"schedulingPolicy":{"basic":{}}})",
        "schedulingPolicy:\n  gang: {minCount: 2}\nschedulingPolicy:\n  basic: {}\n"}) {
    INFO(text);
    const wb::SchedulingConfig c = wb::ReadSchedulingConfig(WithAnnotation(text));
    WASD_REQUIRE_ERRORS(c.errors, {{ErrorType::kDuplicate, kAnn + ".schedulingPolicy"}});
    CHECK(c.errors[0].ToString() ==
          kAnn + ".schedulingPolicy: Duplicate value: \"schedulingPolicy\"");
    CHECK_FALSE(c.usable());
  }
}
