#include "kube/watch_decoder.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace wasd::kube {
namespace {

const std::string kStream =
    R"j({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"10"}}})j"
    "\n"
    R"j({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"11"},"data":{"k":"v\n"}}})j"
    "\n"
    R"j({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"15"}}})j"
    "\n"
    R"j({"type":"DELETED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"16"}}})j"
    "\n"
    R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (12)","reason":"Expired","code":410}})j"
    "\n";

// Type and resourceVersion of each event, for comparing decodes.
std::vector<std::string> Summary(const std::vector<WatchEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(std::string(WatchEventTypeName(e.type)) + "@" + e.ResourceVersion());
  }
  return out;
}

const std::vector<std::string> kExpected = {"ADDED@10", "MODIFIED@11", "BOOKMARK@15", "DELETED@16",
                                            "ERROR@"};

TEST_CASE("watch decoder: whole stream in one piece", "[unit][watch]") {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  REQUIRE(d.Feed(kStream, events).ok());
  REQUIRE(d.Finish(events).ok());
  CHECK(Summary(events) == kExpected);
  CHECK(events[1].object["data"]["k"] == "v\n");  // an escaped newline is not a line break
  CHECK(d.pending_bytes() == 0);
}

TEST_CASE("watch decoder: split into two pieces at every byte boundary", "[unit][watch]") {
  for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
    WatchDecoder d;
    std::vector<WatchEvent> events;
    REQUIRE(d.Feed(std::string_view(kStream).substr(0, cut), events).ok());
    REQUIRE(d.Feed(std::string_view(kStream).substr(cut), events).ok());
    REQUIRE(d.Finish(events).ok());
    INFO("cut at " << cut);
    REQUIRE(Summary(events) == kExpected);
  }
}

TEST_CASE("watch decoder: one byte at a time emits each event exactly at its newline",
          "[unit][watch]") {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  std::size_t lines_seen = 0;
  for (char c : kStream) {
    REQUIRE(d.Feed(std::string_view(&c, 1), events).ok());
    if (c == '\n') ++lines_seen;
    REQUIRE(events.size() == lines_seen);
  }
  CHECK(Summary(events) == kExpected);
}

TEST_CASE("watch decoder: ERROR event carries a 410 Status", "[unit][watch]") {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  REQUIRE(d.Feed(kStream, events).ok());
  REQUIRE(events.back().type == WatchEventType::kError);
  Status s = Status::FromStatusObject(events.back().object);
  CHECK(s.gone());
  CHECK(s.http_code() == 410);
  CHECK(s.reason() == "Expired");
  CHECK(s.message() == "too old resource version: 5 (12)");
}

TEST_CASE("watch decoder: blank lines and CRLF are tolerated; last line without newline",
          "[unit][watch]") {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  REQUIRE(d.Feed("\n\r\n  \n", events).ok());
  REQUIRE(d.Feed(R"j({"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}})j"
                 "\r\n",
                 events)
              .ok());
  REQUIRE(
      d.Feed(R"j({"type":"DELETED","object":{"metadata":{"resourceVersion":"2"}}})j", events).ok());
  CHECK(events.size() == 1);
  CHECK(d.pending_bytes() > 0);
  REQUIRE(d.Finish(events).ok());
  CHECK(Summary(events) == std::vector<std::string>{"ADDED@1", "DELETED@2"});
}

TEST_CASE("watch decoder: malformed lines end decoding with a sticky error", "[unit][watch]") {
  const std::string good = R"j({"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}})j"
                           "\n";
  const std::string after = R"j({"type":"ADDED","object":{"metadata":{"resourceVersion":"2"}}})j"
                            "\n";
  struct Case {
    std::string line;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"{not json\n", "not JSON"},
      {"[1,2]\n", "not a JSON object"},
      {R"j({"object":{}})j"
       "\n",
       "no \"type\""},
      {R"j({"type":"ADDED"})j"
       "\n",
       "no \"object\""},
      {R"j({"type":"ADDED","object":"x"})j"
       "\n",
       "no \"object\""},
      {R"j({"type":"RENAMED","object":{}})j"
       "\n",
       "unknown type \"RENAMED\""},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    WatchDecoder d;
    std::vector<WatchEvent> events;
    Status s = d.Feed(good + c.line + after, events);
    REQUIRE_FALSE(s.ok());
    CHECK(s.kind() == Status::Kind::kBadResponse);
    CHECK_THAT(s.message(), Catch::Contains("line 2") && Catch::Contains(c.expect));
    CHECK(Summary(events) == std::vector<std::string>{"ADDED@1"});  // nothing after the bad line
    Status again = d.Feed(after, events);
    CHECK(again.message() == s.message());
    CHECK(d.Finish(events).message() == s.message());
    CHECK(events.size() == 1);
  }
}

TEST_CASE("watch decoder: truncated last line fails at Finish", "[unit][watch]") {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  REQUIRE(d.Feed(R"j({"type":"ADDED","obj)j", events).ok());
  Status s = d.Finish(events);
  CHECK(s.kind() == Status::Kind::kBadResponse);
  CHECK(events.empty());
}

TEST_CASE("watch decoder: a line over the limit is refused without buffering it all",
          "[unit][watch]") {
  WatchDecoder d(64);
  std::vector<WatchEvent> events;
  REQUIRE(d.Feed(R"j({"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}})j"
                 "\n",
                 events)
              .ok());
  REQUIRE(d.Feed(std::string(40, ' '), events).ok());
  Status s = d.Feed(std::string(40, ' '), events);
  CHECK(s.kind() == Status::Kind::kBadResponse);
  CHECK_THAT(s.message(), Catch::Contains("exceeds 64 bytes"));
  CHECK(d.pending_bytes() == 0);
  CHECK(events.size() == 1);
}

}  // namespace
}  // namespace wasd::kube
