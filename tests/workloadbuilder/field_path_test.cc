#include "workloadbuilder/field_path.h"

#include <catch2/catch.hpp>

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
