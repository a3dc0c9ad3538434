#include "workloadbuilder/field_path.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>

namespace wb = wasd::workloadbuilder;

TEST_CASE("FieldPath renders the Kubernetes form and a JSON Pointer", "[unit]") {
  const wb::FieldPath p =
      wb::FieldPath::Parse("spec.scheduling").Child("resourceClaims").Index(1).Child("name");
  CHECK(p.String() == "spec.scheduling.resourceClaims[1].name");
  CHECK(p.JsonPointer() == "/spec/scheduling/resourceClaims/1/name");
}

TEST_CASE("FieldPath map keys use brackets and escape the pointer", "[unit]") {
  const wb::FieldPath p = wb::FieldPath::Parse("metadata.annotations")
                              .Key("wasd.io/scheduling")
                              .Child("disruptionMode");
  CHECK(p.String() == "metadata.annotations[wasd.io/scheduling].disruptionMode");
  CHECK(p.JsonPointer() == "/metadata/annotations/wasd.io~1scheduling/disruptionMode");
  CHECK(wb::FieldPath().Key("a~b/c").JsonPointer() == "/a~0b~1c");
}

TEST_CASE("FieldPath::Parse ignores empty segments; the empty path is empty", "[unit]") {
  CHECK(wb::FieldPath::Parse("spec..strategy.type").String() == "spec.strategy.type");
  CHECK(wb::FieldPath().empty());
  CHECK(wb::FieldPath().String().empty());
  CHECK(wb::FieldPath::Parse("a") == wb::FieldPath().Child("a"));
  CHECK(wb::EscapeJsonPointerToken("~/") == "~0~1");
}

TEST_CASE("FieldPath renders indexes, keys and names in any order", "[unit]") {
  const wb::FieldPath p =
      wb::FieldPath().Index(0).Key("k.x").Index(18446744073709551615u).Child("");
  CHECK(p.String() == "[0][k.x][18446744073709551615].");
  CHECK(p.JsonPointer() == "/0/k.x/18446744073709551615/");
  CHECK_FALSE(p.empty());
  // Empty names render as nothing until other text comes before them.
  CHECK(wb::FieldPath().Child("").empty());
  CHECK(wb::FieldPath().Child("").Child("").String().empty());
  CHECK(wb::FieldPath().Child("").JsonPointer() == "/");
  CHECK(wb::FieldPath().Child("").Child("a").Child("").String() == "a.");
  CHECK_FALSE(wb::FieldPath().Key("").empty());
  CHECK(wb::FieldPath().Key("") == wb::FieldPath::Parse("[]"));
}

TEST_CASE("FieldPath keeps long paths and keys whole", "[unit]") {
  // Past the bytes a path keeps inside itself, and a key whose length takes
  // two and three bytes in the encoding.
  const std::string long_key(300, 'k');
  const std::string huge_key(20000, '/');
  wb::FieldPath p = wb::FieldPath::Parse("metadata.annotations");
  std::string text = "metadata.annotations";
  std::string pointer = "/metadata/annotations";
  for (int i = 0; i < 12; ++i) {
    p = p.Child("schedulingConstraints").Index(static_cast<std::size_t>(i));
    text += ".schedulingConstraints[" + std::to_string(i) + "]";
    pointer += "/schedulingConstraints/" + std::to_string(i);
    CHECK(p.String() == text);
    CHECK(p.JsonPointer() == pointer);
  }
  const wb::FieldPath k = p.Key(long_key).Key(huge_key).Child("end");
  CHECK(k.String() == text + "[" + long_key + "][" + huge_key + "].end");
  std::string escaped;
  for (std::size_t i = 0; i < huge_key.size(); ++i) escaped += "~1";
  CHECK(k.JsonPointer() == pointer + "/" + long_key + "/" + escaped + "/end");
  CHECK(wb::FieldPath().Key(long_key).String() == "[" + long_key + "]");
}

TEST_CASE("FieldPath copies, moves and assigns inline and long paths", "[unit]") {
  const wb::FieldPath short_path = wb::FieldPath::Parse("spec.replicas");
  const wb::FieldPath long_path = wb::FieldPath().Key(std::string(200, 'x')).Child("y");
  for (const wb::FieldPath* src : {&short_path, &long_path}) {
    const std::string want = src->String();
    wb::FieldPath copy(*src);
    CHECK(copy.String() == want);
    wb::FieldPath moved(std::move(copy));
    CHECK(moved.String() == want);
    for (const wb::FieldPath* before : {&short_path, &long_path}) {
      wb::FieldPath assigned = *before;
      assigned = *src;
      CHECK(assigned.String() == want);
      wb::FieldPath move_assigned = *before;
      wb::FieldPath tmp = *src;
      move_assigned = std::move(tmp);
      CHECK(move_assigned.String() == want);
      CHECK(move_assigned.Child("z").String() == want + ".z");
    }
    CHECK(*src == moved);
  }
  CHECK_FALSE(short_path == long_path);
}
