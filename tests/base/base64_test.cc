#include "base/base64.h"

#include <catch2/catch.hpp>
#include <string>

namespace wasd::base {
namespace {

TEST_CASE("Base64 round-trips and matches the standard alphabet", "[unit][base]") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("\xff\xfe") == "//4=");
  for (const std::string s : {"", "a", "ab", "abc", "abcd", "\x00\x01\xff binary"}) {
    Result<std::string> back = Base64Decode(Base64Encode(s));
    REQUIRE(back.ok());
    CHECK(*back == s);
  }
}

TEST_CASE("Base64Decode refuses what is not padded standard base64", "[unit][base]") {
  for (const char* bad : {"abc", "ab!=", "a===", "=abc", "ab=c", "Zm9v\n", "Zm 9v", "Zg=A"}) {
    INFO(bad);
    CHECK_FALSE(Base64Decode(bad).ok());
  }
  CHECK(*Base64Decode("Zg==") == "f");
  CHECK(*Base64Decode("Zm8=") == "fo");
}

}  // namespace
}  // namespace wasd::base
