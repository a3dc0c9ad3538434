#include "base/utf8.h"

#include <catch2/catch.hpp>
#include <string>

namespace wasd::base {
namespace {

TEST_CASE("the one UTF-8 validator is RFC 3629's", "[unit][base]") {
  CHECK(IsValidUtf8("plain ascii"));
  CHECK(IsValidUtf8("gr\xC3\xBC\xC3\x9F"));
  CHECK(IsValidUtf8("\xE2\x80\xA6"));
  CHECK(IsValidUtf8("\xF0\x9F\x98\x80"));
  CHECK(IsValidUtf8("\xF4\x8F\xBF\xBF"));        // U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));      // a surrogate
  CHECK_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong, three bytes
  CHECK_FALSE(IsValidUtf8("\xF0\x80\x80\xAF"));  // overlong, four bytes
  CHECK_FALSE(IsValidUtf8("cut\xC3"));           // truncated
  CHECK_FALSE(IsValidUtf8("\xFF"));
  CHECK(Utf8SequenceLength("\xC3\xBC", 0) == 2);
  CHECK(Utf8SequenceLength("a", 0) == 1);
  CHECK(Utf8SequenceLength("\xED\xA0\x80", 0) == 0);
}

TEST_CASE("IsValidUtf8 finds a sequence wherever it sits around ASCII runs", "[unit][base]") {
  // The validator skips ASCII eight bytes at a time: each sequence, good or
  // bad, at every offset of texts up to three words long.
  const std::string kGood[] = {"\xC3\xBC", "\xE2\x80\xA6", "\xF0\x9F\x98\x80"};
  const std::string kBad[] = {"\xFF", "\xC3", "\xED\xA0\x80", "\xC0\xAF", "\xF0\x80\x80\xAF"};
  for (std::size_t before = 0; before <= 17; ++before) {
    for (std::size_t after = 0; after <= 9; ++after) {
      const std::string pad_before(before, 'a');
      const std::string pad_after(after, 'b');
      INFO(before << " bytes before, " << after << " after");
      CHECK(IsValidUtf8(pad_before + pad_after));
      for (const std::string& g : kGood) CHECK(IsValidUtf8(pad_before + g + pad_after));
      for (const std::string& b : kBad) CHECK_FALSE(IsValidUtf8(pad_before + b + pad_after));
    }
  }
}

TEST_CASE("OneLine escapes what is not printable UTF-8", "[unit][base]") {
  CHECK(OneLine("a\nb\xFF") == "a\\x0ab\\xff");
  CHECK(OneLine("\xED\xA0\x80") == "\\xed\\xa0\\x80");
}

}  // namespace
}  // namespace wasd::base
