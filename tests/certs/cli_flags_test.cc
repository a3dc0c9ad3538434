#include "certs/cli_flags.h"

#include <catch2/catch.hpp>

#include <initializer_list>

namespace wasd::certs {
namespace {

const FlagSpec kSpec{{"service", "days"}, {"webhook-config"}, {"once", "force"}};

// Parses a command line given as words (the first is the subcommand).
bool Parse(std::initializer_list<const char*> words, ParsedFlags* out, std::string* error) {
  std::vector<std::string> storage(words.begin(), words.end());
  std::vector<char*> argv;
  for (std::string& w : storage) argv.push_back(w.data());
  return ParseFlags(static_cast<int>(argv.size()), argv.data(), kSpec, out, error);
}

}  // namespace

TEST_CASE("ParseFlags reads values, lists and switches", "[unit][certs]") {
  ParsedFlags f;
  std::string error;
  REQUIRE(Parse({"rotate", "--service", "wasd", "--days=30", "--webhook-config", "a",
                 "--webhook-config=b,c", "--webhook-config", "d", "e,f", "--once"},
                &f, &error));
  CHECK(f.Get("service") == "wasd");
  CHECK(f.Get("days") == "30");
  CHECK(f.Get("absent", "fallback") == "fallback");
  CHECK(f.List("webhook-config") == std::vector<std::string>{"a", "b", "c", "d", "e", "f"});
  CHECK(f.List("absent").empty());
  CHECK(f.On("once"));
  CHECK_FALSE(f.On("force"));
  CHECK_FALSE(f.help);
}

TEST_CASE("ParseFlags switches accept =true and =false", "[unit][certs]") {
  ParsedFlags f;
  std::string error;
  REQUIRE(Parse({"x", "--once=false", "--force=true"}, &f, &error));
  CHECK_FALSE(f.On("once"));
  CHECK(f.On("force"));
  CHECK_FALSE(Parse({"x", "--once=yes"}, &f, &error));
  CHECK(error == "--once takes no value other than true or false");
}

TEST_CASE("ParseFlags stops at --help", "[unit][certs]") {
  ParsedFlags f;
  std::string error;
  REQUIRE(Parse({"x", "--service", "s", "-h", "--bogus"}, &f, &error));
  CHECK(f.help);
}

TEST_CASE("ParseFlags errors are one precise line", "[unit][certs]") {
  ParsedFlags f;
  std::string error;
  CHECK_FALSE(Parse({"x", "--bogus"}, &f, &error));
  CHECK(error == "unknown flag --bogus");
  f = {};
  CHECK_FALSE(Parse({"x", "--bogus=1"}, &f, &error));
  CHECK(error == "unknown flag --bogus");
  f = {};
  CHECK_FALSE(Parse({"x", "--service"}, &f, &error));
  CHECK(error == "--service needs a value");
  f = {};
  CHECK_FALSE(Parse({"x", "--service", "a", "--service", "b"}, &f, &error));
  CHECK(error == "--service given twice");
  f = {};
  CHECK_FALSE(Parse({"x", "stray"}, &f, &error));
  CHECK(error == "unexpected argument stray");
  f = {};
  CHECK_FALSE(Parse({"x", "--service", "a", "b"}, &f, &error));
  CHECK(error == "unexpected argument b");
}

}  // namespace wasd::certs
