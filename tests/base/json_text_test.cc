#include "base/json_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace wasd::base {
namespace {

using nlohmann::json;

std::string Quoted(std::string_view s, JsonEscaping e) {
  std::string out;
  AppendJsonString(&out, s, e);
  return out;
}

std::string NlohmannDump(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST_CASE("JSON text like nlohmann: every byte, alone and in runs, as dump() writes it",
          "[unit][base]") {
  for (int b = 0; b < 256; ++b) {
    const std::string c(1, static_cast<char>(b));
    INFO("byte " << b);
    CHECK(Quoted(c, JsonEscaping::kLikeNlohmann) == NlohmannDump(c));
    const std::string in = "a plain run of sixteen+ bytes " + c + " and more after it \xC3\xA9";
    CHECK(Quoted(in, JsonEscaping::kLikeNlohmann) == NlohmannDump(in));
  }
  for (const std::string& s :
       {std::string(), std::string("\b\f\n\r\t\"\\/"), std::string("caf\xC3\xA9 \xF0\x9F\x98\x80"),
        std::string("bad \xFF\xFE utf-8 \xC3"), std::string("\xED\xA0\x80 surrogate"),
        std::string(40, 'x') + "\x01" + std::string(40, '"')}) {
    INFO(s);
    CHECK(Quoted(s, JsonEscaping::kLikeNlohmann) == NlohmannDump(s));
  }
}

TEST_CASE("JSON text, safe: DEL and invalid bytes escaped, the result always valid JSON",
          "[unit][base]") {
  CHECK(Quoted("a\x7F"
               "b",
               JsonEscaping::kSafe) == "\"a\\u007fb\"");
  CHECK(Quoted("\b\f", JsonEscaping::kSafe) == "\"\\u0008\\u000c\"");
  CHECK(Quoted("x\xFFy\xC3\xA9", JsonEscaping::kSafe) == "\"x\\ufffdy\xC3\xA9\"");
  // 16-byte steps: the same answer wherever the special byte sits.
  for (std::size_t at = 0; at < 40; ++at) {
    for (const char k : {'\x7F', '\xFF', '"', '\x01'}) {
      std::string s(40, 'x');
      s[at] = k;
      const std::string text = Quoted(s, JsonEscaping::kSafe);
      INFO("at " << at << " byte " << static_cast<int>(static_cast<unsigned char>(k)));
      const json back = json::parse(text, nullptr, false);
      REQUIRE(back.is_string());
      std::string want = s;
      if (k == '\xFF') want.replace(at, 1, "\xEF\xBF\xBD");
      CHECK(back.get<std::string>() == want);
    }
  }
}

}  // namespace
}  // namespace wasd::base
