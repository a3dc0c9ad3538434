// PrunedParse against nlohmann::json::parse: the same texts accepted and
// refused (a fixed battery and deterministic mutations of real reviews), the
// kept members equal to the same members of the whole document; and
// admission::Review giving byte-identical answers with and without pruning
// on every corpus body, bench fixture and mutation of them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/review.h"
#include "base/json_projection.h"
#include "base/json_text.h"

namespace {

using nlohmann::json;
using wasd::base::JsonProjection;
using wasd::base::PruneStatus;

const JsonProjection kRoot({{"a"}, {"obj", "keep"}, {"obj", "x\"y"}, {"wasd.io/scheduling"}});

PruneStatus PrunedParse(std::string_view text, const JsonProjection& projection,
                        std::size_t max_depth, json* out) {
  return projection.Parse(text, max_depth, out);
}

bool NlohmannAccepts(const std::string& text) {
  return !json::parse(text, nullptr, false).is_discarded();
}

// Both stacks of the scanner's skipping loop: the fixed one (limits up to
// JsonProjection::kDefaultMaxDepth levels) and the heap one.
bool PrunedAccepts(const std::string& text) {
  json out;
  const bool shallow = PrunedParse(text, kRoot, 200, &out) == PruneStatus::kOk;
  const bool deep =
      PrunedParse(text, kRoot, 2 * JsonProjection::kDefaultMaxDepth, &out) == PruneStatus::kOk;
  CHECK(shallow == deep);  // no text here nests deeper than 200
  return deep;
}

// What ParseJsonWithin must say of a text, worked out with nlohmann's SAX
// parser: whether it is JSON, how deep it nests, how many values it holds
// and whether an object repeats a key.
struct Reference : nlohmann::json_sax<json> {
  std::size_t depth = 0, deepest = 0, values = 0;
  bool repeated = false;
  std::vector<std::vector<std::string>> keys;  // per open object

  bool Value() {
    ++values;
    return true;
  }
  bool Open() {
    ++values;
    deepest = std::max(deepest, ++depth);
    keys.emplace_back();  // arrays too: Close() pops one per level
    return true;
  }
  bool Close() {
    --depth;
    keys.pop_back();
    return true;
  }
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(); }
  bool key(string_t& k) override {
    std::vector<std::string>& seen = keys.back();
    if (std::find(seen.begin(), seen.end(), k) != seen.end()) repeated = true;
    seen.push_back(k);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

// ParseJsonWithin against the reference on `text`, with a limit just above,
// at and just below what the text needs.
void CheckWithin(const std::string& text) {
  Reference ref;
  const bool is_json = json::sax_parse(text, &ref);
  INFO(json(text.substr(0, 400)).dump(-1, ' ', true, json::error_handler_t::replace));
  for (const int slack : {1, 0, -1}) {
    if (slack < 0 && (ref.deepest == 0 || ref.values == 0)) continue;
    const std::size_t max_depth = slack < 0 ? ref.deepest - 1 : ref.deepest + slack;
    const std::size_t max_values = slack < 0 ? ref.values - 1 : ref.values + slack;
    json out;
    const PruneStatus got = wasd::base::ParseJsonWithin(text, max_depth, max_values, &out);
    const bool want_ok =
        is_json && !ref.repeated && ref.deepest <= max_depth && ref.values <= max_values;
    REQUIRE((got == PruneStatus::kOk) == want_ok);
    if (want_ok) CHECK(out.dump() == json::parse(text).dump());
    if (is_json && !ref.repeated && ref.deepest <= max_depth && ref.values > max_values) {
      CHECK(got == PruneStatus::kTooManyValues);
    }
    if (is_json && ref.repeated && ref.deepest <= max_depth && ref.values <= max_values) {
      CHECK(got == PruneStatus::kDuplicateKey);
    }
  }
}

std::vector<std::string> ReadDir(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

// Every AdmissionReview body the tests have: the fuzz corpus and the bench
// fixtures.
std::vector<std::string> Bodies() {
  const std::filesystem::path testdata(WASD_TESTDATA);
  std::vector<std::string> bodies =
      ReadDir(testdata.parent_path() / "fuzz" / "corpus" / "admission_review");
  for (const auto& entry : std::filesystem::directory_iterator(testdata / "bench")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    bodies.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return bodies;
}

// Deterministic damage to `text`: a byte replaced, removed or inserted, the
// text cut short, or a tricky sequence spliced in.
std::string Mutate(const std::string& text, std::mt19937& rng) {
  // clang-format off
  static const std::vector<std::string> kSplices = {
      "\\", "\"", "\\u", "\\uD800", "\\uDC00", "\\uD800\\uDC00", "\xC0\x80", "\xED\xA0\x80",
      "\xF4\x90\x80\x80", "\xE2\x82", "1e999", "-", "0.", "01", "tru", "\x01", ",", ":", "{",
      "}", "[", "]", "null", " ", "\xEF\xBB\xBF", "1E+2", "-0.0e-0"};
  // clang-format on
  std::string s = text;
  if (s.empty()) return kSplices[rng() % kSplices.size()];
  const std::size_t at = rng() % s.size();
  switch (rng() % 5) {
    case 0: s[at] = static_cast<char>(rng() % 256); break;
    case 1: s.erase(at, 1); break;
    case 2: s.insert(at, 1, static_cast<char>(rng() % 256)); break;
    case 3: s.resize(at); break;
    default: s.insert(at, kSplices[rng() % kSplices.size()]); break;
  }
  return s;
}

}  // namespace

TEST_CASE("PrunedParse accepts exactly what nlohmann accepts", "[unit]") {
  // clang-format off
  const std::vector<std::string> texts = {
      "", " ", "{}", "[]", " {} ", "\xEF\xBB\xBF{}", "\xEF\xBB{}", "\xEF{}", "{} x", "{}{}",
      std::string("{}\0", 3), std::string("\0", 1), "0", "-0", "01", "-01", "1.", "1.5", ".5",
      "+1", "-", "1e5", "1E+5", "1e-5", "1e", "1e+", "1e999", "-1e999", "1e-999", "1.0E308",
      "123456789012345678901234567890", "-9223372036854775809", "18446744073709551616",
      "true", "false", "null", "tru", "nul", "truex", "[true false]", "[1 2]", "[1,]", "[,1]",
      "[1,,2]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{1:2}", "{\"a\":1 \"b\":2}",
      "\"abc\"", "\"a\tb\"", "\"a\\tb\"", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\u0000\"",
      "\"\\uD800\"", "\"\\uD800\\uDC00\"", "\"\\uDC00\"", "\"\\uD800\\u0041\"", "\"\\uDBFF\\uDFFF\"",
      // A high surrogate, then "u" + four hex digits not behind a backslash.
      "\"\\uD83DXuDE00\"", "\"\\uD83D\\\\uDE00\"", "{\"obj\":{\"drop\":\"\\uD83DxuDE00\"}}",
      "\"\\/\\b\\f\\n\\r\\\"\\\\\"", "\"\xC3\xA9\"", "\"\xC0\x80\"", "\"\xED\xA0\x80\"",
      "\"\xED\x9F\xBF\"", "\"\xF4\x90\x80\x80\"", "\"\xF0\x9F\x98\x80\"", "\"\xE2\x82\"",
      "\"\x80\"", "\"\xFF\"", "\"unterminated", "\"long plain string of more than eight bytes\"",
      "{\"obj\":{\"keep\":[1,{\"x\":2}],\"drop\":{\"y\":[3]}},\"b\":\"\\u00e9\"}",
      "{\"obj\":{\"keep\":1,\"drop\":[1 2]}}", "{\"obj\":{\"keep\":1,\"drop\":\"\x01\"}}",
      "{\"a\":1}\n\r\t ", "{\"obj\":7}", "[{\"a\":1}]"};
  // clang-format on
  for (const std::string& t : texts) {
    INFO(json(t).dump(-1, ' ', true, json::error_handler_t::replace));
    CHECK(PrunedAccepts(t) == NlohmannAccepts(t));
  }
}

TEST_CASE("PrunedParse keeps the selected members exactly as nlohmann reads them", "[unit]") {
  const std::string text = R"({"a":{"deep":[1,2.5,"\u00e9"]},"b":[1,2],"obj":{"keep":true,)"
                           R"("x\"y":null,"drop":{"z":1}},"wasd.io\/scheduling":"s","obj2":{}})";
  json pruned;
  REQUIRE(PrunedParse(text, kRoot, 200, &pruned) == PruneStatus::kOk);
  const json whole = json::parse(text);
  const json want = {
      {"a", whole["a"]}, {"obj", {{"keep", true}, {"x\"y", nullptr}}}, {"wasd.io/scheduling", "s"}};
  CHECK(pruned == want);
}

TEST_CASE("PrunedParse: repeated members keep the last, non-objects are kept whole", "[unit]") {
  json out;
  REQUIRE(PrunedParse(R"({"obj":{"keep":1},"obj":{"drop":2}})", kRoot, 200, &out) ==
          PruneStatus::kOk);
  CHECK(out == json::parse(R"({"obj":{}})"));
  REQUIRE(PrunedParse(R"({"obj":[{"keep":1}],"a":1,"a":2})", kRoot, 200, &out) == PruneStatus::kOk);
  CHECK(out == json::parse(R"({"obj":[{"keep":1}],"a":2})"));
  REQUIRE(PrunedParse(R"([{"a":1}])", kRoot, 200, &out) == PruneStatus::kOk);
  CHECK(out == json::parse(R"([{"a":1}])"));
}

TEST_CASE("PrunedParse refuses nesting beyond the limit, in skipped members too", "[unit]") {
  const auto nested = [](int depth) {
    return R"({"skipped":)" + std::string(static_cast<std::size_t>(depth - 1), '[') +
           std::string(static_cast<std::size_t>(depth - 1), ']') + "}";
  };
  json out;
  CHECK(PrunedParse(nested(200), kRoot, 200, &out) == PruneStatus::kOk);
  CHECK(PrunedParse(nested(201), kRoot, 200, &out) == PruneStatus::kTooDeep);
  CHECK(PrunedParse(std::string(100000, '['), kRoot, 200, &out) == PruneStatus::kTooDeep);
}

TEST_CASE("ParseJsonWithin reads JSON as nlohmann does, within its limits", "[unit]") {
  // clang-format off
  const std::vector<std::string> texts = {
      "{}", "[]", "0", "-0", "1.5", "1e5", "\"s\"", "\"\\u00e9\\uD83D\\uDE00\\n\"", "null", "[1,[2,[3]]]",
      R"({"a":1,"b":{"c":[true,false,null],"d":"x"}})", R"({"a":1,"a":2})", R"({"a":{"b":1,"b":1}})",
      R"([{"a":1},{"a":1}])", R"({"a":{"b":1},"b":{"a":1}})", R"({"a\u0062":1,"ab":2})",
      R"({"schedulingPolicy":{"gang":{"minCount":3}},"resourceClaims":[{"name":"n"}]})",
      "{\"a\":1}\n", std::string("{}\0x", 4), "\xEF\xBB\xBF[1]", "{\"a\":1,}", "[1 2]", "tru", "",
      "123456789012345678901234567890", "1e999"};
  // clang-format on
  for (const std::string& t : texts) CheckWithin(t);
  json out;
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  CHECK(wasd::base::ParseJsonWithin(deep, 300, 1000, &out) == PruneStatus::kOk);
  CHECK(wasd::base::ParseJsonWithin(deep, 299, 1000, &out) == PruneStatus::kTooDeep);
  // Every fixture and corpus body, and mutations of them (repeated keys
  // come from the mutations that cut or splice text).
  std::mt19937 rng(1819);
  for (const std::string& body : Bodies()) {
    CheckWithin(body);
    for (int i = 0; i < 10; ++i) CheckWithin(Mutate(body, rng));
  }
}

TEST_CASE("PrunedParse agrees with nlohmann on damaged reviews", "[unit]") {
  std::mt19937 rng(6276);  // fixed seed: the same cases every run
  std::size_t refused = 0, total = 0;
  for (const std::string& body : Bodies()) {
    std::string text = body;
    for (int i = 0; i < 60; ++i) {
      text = (i % 4 == 0) ? Mutate(body, rng) : Mutate(text, rng);
      const bool accepted = NlohmannAccepts(text);
      INFO(text.substr(0, 400));
      REQUIRE(PrunedAccepts(text) == accepted);
      refused += accepted ? 0 : 1;
      ++total;
    }
  }
  CHECK(refused > total / 10);  // the mutations do produce invalid JSON
  CHECK(refused < total);       // and valid JSON
}

TEST_CASE("Review answers the same with and without pruning and direct answer text", "[unit]") {
  using wasd::admission::Options;
  using wasd::admission::Result;
  using wasd::admission::Review;
  using wasd::admission::Webhook;
  std::mt19937 rng(4242);
  std::vector<std::string> bodies = Bodies();
  const std::size_t originals = bodies.size();
  for (std::size_t i = 0; i < originals; ++i) {
    for (int k = 0; k < 20; ++k) bodies.push_back(Mutate(bodies[i], rng));
  }
  const json deployment = json::parse(R"({"metadata":{"name":"d","annotations":)"
                                      R"({"wasd.io/scheduling":"{\"schedulingPolicy\":)"
                                      R"({\"gang\":{\"minCount\":3}}}"}},"spec":{"replicas":4}})");
  std::size_t reviews = 0;
  for (const std::string& body : bodies) {
    for (Webhook w :
         {Webhook::kValidateDeployment, Webhook::kMutateDeployment, Webhook::kMutatePod}) {
      for (bool causes : {true, false}) {
        Options pruned;
        pruned.denial_causes = causes;
        Options whole = pruned;
        whole.prune_unread_fields = false;
        whole.write_answer_directly = false;  // and the answer through nlohmann's dump()
        const Result a = Review(w, body, pruned);
        const Result b = Review(w, body, whole);
        INFO(body.substr(0, 400));
        REQUIRE(a.http_status == b.http_status);
        REQUIRE(a.body == b.body);
        CHECK(a.content_type == b.content_type);
        CHECK(a.summary.uid == b.summary.uid);
        CHECK(a.summary.kind == b.summary.kind);
        CHECK(a.summary.namespace_ == b.summary.namespace_);
        CHECK(a.summary.name == b.summary.name);
        CHECK(a.summary.operation == b.summary.operation);
        CHECK(a.summary.sub_resource == b.summary.sub_resource);
        CHECK(a.summary.allowed == b.summary.allowed);
        CHECK(a.summary.code == b.summary.code);
        CHECK(a.summary.patched == b.summary.patched);
        CHECK(a.summary.error == b.summary.error);
        CHECK(a.summary.out_of_scope == b.summary.out_of_scope);
        REQUIRE((a.pending == nullptr) == (b.pending == nullptr));
        if (a.pending != nullptr) {
          CHECK(a.scale_namespace == b.scale_namespace);
          CHECK(a.scale_name == b.scale_name);
          for (const json* d : {static_cast<const json*>(nullptr), &deployment}) {
            CHECK(FinishScale(*a.pending, d).body == FinishScale(*b.pending, d).body);
          }
        }
        ++reviews;
      }
    }
  }
  CHECK(reviews == bodies.size() * 6);
}

TEST_CASE("The direct answer text escapes strings as nlohmann's dump does", "[unit]") {
  using wasd::admission::Options;
  using wasd::admission::Result;
  using wasd::admission::Review;
  using wasd::admission::Webhook;
  const std::filesystem::path fixtures = std::filesystem::path(WASD_TESTDATA) / "bench";
  const auto read = [&](const char* name) {
    std::ifstream in(fixtures / name, std::ios::binary);
    return json::parse(
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  };
  // Strings that reach the answer (the uid always; the name in a denial's
  // details and messages) with every kind of byte the writer treats apart.
  const std::vector<std::string> tricky = {
      "plain",       "quote\"back\\slash", "ctl\x01\x1f\x7f",        "\b\f\n\r\t",
      "caf\xC3\xA9", "\xE2\x80\xA8 line",  "\xF0\x9F\x98\x80 emoji", "/slash/"};
  std::size_t denials = 0, answers = 0;
  for (const char* name :
       {"deploy-create-gang-invalid.json", "deploy-create-gang-valid.json", "pod-create.json"}) {
    for (const std::string& text : tricky) {
      json review = read(name);
      review["request"]["uid"] = "uid-" + text;
      review["request"]["name"] = text;
      review["request"]["object"]["metadata"]["name"] = text;
      const std::string body = review.dump();
      const Webhook w = std::string_view(name).starts_with("pod") ? Webhook::kMutatePod
                                                                  : Webhook::kValidateDeployment;
      for (bool causes : {true, false}) {
        Options direct;
        direct.denial_causes = causes;
        Options reference = direct;
        reference.write_answer_directly = false;
        const Result a = Review(w, body, direct);
        const Result b = Review(w, body, reference);
        INFO(name << " " << text);
        REQUIRE(a.http_status == 200);
        REQUIRE(a.body == b.body);
        const json answer = json::parse(a.body);
        CHECK(answer["response"]["uid"] == "uid-" + text);
        denials += answer["response"]["allowed"] == false ? 1 : 0;
        ++answers;
      }
    }
  }
  CHECK(denials > 0);
  CHECK(denials < answers);
}

TEST_CASE(
    "JsonEscapeFreePrefix finds the first byte to escape and says whether it passed ASCII only",
    "[unit]") {
  // Every position of every kind of byte in strings around the 16-byte steps.
  const std::string kinds = std::string("\"\\\x01\x1F\x7F\x80\xFF", 7) + " aZ";
  for (std::size_t len = 0; len <= 40; ++len) {
    for (std::size_t at = 0; at < len; ++at) {
      for (const char k : kinds) {
        std::string s(len, 'x');
        s[at] = k;
        std::size_t want = 0;
        bool want_ascii = true;
        for (; want < s.size(); ++want) {
          const auto c = static_cast<unsigned char>(s[want]);
          if (c < 0x20 || c == '"' || c == '\\') break;
          if (c >= 0x80) want_ascii = false;
        }
        bool ascii = false;
        INFO("len " << len << " at " << at << " byte " << static_cast<int>(k));
        REQUIRE(wasd::base::JsonEscapeFreePrefix(s, &ascii) == want);
        REQUIRE(ascii == want_ascii);
      }
    }
  }
}
