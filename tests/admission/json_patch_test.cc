#include "admission/json_patch.h"

#include <catch2/catch.hpp>

#include "patch_apply.h"

using wasd::admission::Base64Encode;
using wasd::admission::JsonPatch;

TEST_CASE("base64 matches RFC 4648 test vectors", "[unit]") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foob") == "Zm9vYg==");
  CHECK(Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
  CHECK(Base64Encode(std::string("\xff\xfe\x00", 3)) == "//4A");
  CHECK(wasd::testing::DecodeBase64(Base64Encode("any binary\x01\x02")) == "any binary\x01\x02");
}

TEST_CASE("JsonPatch renders add operations with escaped values", "[unit]") {
  JsonPatch p;
  CHECK(p.empty());
  CHECK(p.Json() == "[]");
  p.Add("/metadata/labels/wasd.io~1managed", "true");
  p.Add("/spec/schedulingGates/-", {{"name", "wasd.io/pod-group"}});
  CHECK(p.size() == 2);
  const auto doc = nlohmann::json::parse(p.Json());
  REQUIRE(doc.size() == 2);
  CHECK(doc[0] == nlohmann::json{{"op", "add"}, {"path", "/metadata/labels/wasd.io~1managed"},
                                 {"value", "true"}});
  CHECK(doc[1]["path"] == "/spec/schedulingGates/-");
  CHECK(doc[1]["value"]["name"] == "wasd.io/pod-group");
}
