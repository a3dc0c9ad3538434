#include "workloadbuilder/document_builder.h"

#include <catch2/catch.hpp>

namespace wb = wasd::workloadbuilder;
using nlohmann::json;

TEST_CASE("DocumentBuilder builds nested values", "[unit]") {
  wb::DocumentBuilder b(3, 100, wb::FieldPath::Parse("base"));
  REQUIRE(b.StartObject());
  CHECK(b.ExpectsKey());
  REQUIRE(b.Key("a"));
  REQUIRE(b.StartArray());
  REQUIRE(b.Value(1));
  REQUIRE(b.Insert(json{{"x", true}}, 2, 1));
  REQUIRE(b.End() != nullptr);
  REQUIRE(b.End() != nullptr);
  CHECK(b.done());
  CHECK(b.values() == 5);
  CHECK(b.Take() == json::parse(R"({"a":[1,{"x":true}]})"));
}

TEST_CASE("DocumentBuilder stops at its limits and stays stopped", "[unit]") {
  SECTION("depth") {
    wb::DocumentBuilder b(2, 100, {});
    REQUIRE(b.StartArray());
    REQUIRE(b.StartArray());
    CHECK_FALSE(b.StartArray());
    CHECK(b.stop() == wb::DocumentBuilder::Stop::kTooDeep);
    CHECK(b.Reason() == "nests deeper than 2 levels");
    CHECK_FALSE(b.Value(1));
    CHECK(b.Take().is_null());
  }
  SECTION("depth of an inserted copy") {
    wb::DocumentBuilder b(2, 100, {});
    REQUIRE(b.StartArray());
    CHECK_FALSE(b.Insert(json::parse("[[1]]"), 3, 2));
    CHECK(b.stop() == wb::DocumentBuilder::Stop::kTooDeep);
  }
  SECTION("values, copies counted") {
    wb::DocumentBuilder b(5, 4, {});
    REQUIRE(b.StartArray());
    REQUIRE(b.Value(1));
    CHECK_FALSE(b.Insert(json::parse("[1,2]"), 3, 1));
    CHECK(b.Reason() == "holds more than 4 values");
  }
  SECTION("a repeated key, with its path") {
    wb::DocumentBuilder b(5, 100, wb::FieldPath::Parse("metadata").Key("wasd.io/scheduling"));
    REQUIRE(b.StartObject());
    REQUIRE(b.Key("list"));
    REQUIRE(b.StartArray());
    REQUIRE(b.Value(0));
    REQUIRE(b.StartObject());
    REQUIRE(b.Key("name"));
    REQUIRE(b.Value("a"));
    CHECK_FALSE(b.Key("name"));
    CHECK(b.stop() == wb::DocumentBuilder::Stop::kDuplicateKey);
    CHECK(b.duplicate_key() == "name");
    CHECK(b.duplicate_path().String() == "metadata[wasd.io/scheduling].list[1].name");
    CHECK(b.Reason() == "duplicate key \"name\"");
  }
}
