#include "admission/json_patch.h"

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "patch_apply.h"

namespace base = wasd::base;
using wasd::admission::JsonPatch;

TEST_CASE("base64 matches RFC 4648 test vectors", "[unit]") {
  CHECK(base::Base64Encode("") == "");
  CHECK(base::Base64Encode("f") == "Zg==");
  CHECK(base::Base64Encode("fo") == "Zm8=");
  CHECK(base::Base64Encode("foo") == "Zm9v");
  CHECK(base::Base64Encode("foob") == "Zm9vYg==");
  CHECK(base::Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(base::Base64Encode("foobar") == "Zm9vYmFy");
  CHECK(base::Base64Encode(std::string("\xff\xfe\x00", 3)) == "//4A");
  CHECK(wasd::testing::DecodeBase64(base::Base64Encode("any binary\x01\x02")) ==
        "any binary\x01\x02");
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
  CHECK(doc[0] == nlohmann::json{{"op", "add"},
                                 {"path", "/metadata/labels/wasd.io~1managed"},
                                 {"value", "true"}});
  CHECK(doc[1]["path"] == "/spec/schedulingGates/-");
  CHECK(doc[1]["value"]["name"] == "wasd.io/pod-group");
}
