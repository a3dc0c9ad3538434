// Client::Watch and Informer against the loopback fake API server: events,
// bookmarks, stop, 410 -> relist, reconnect after a dropped connection.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "fake_apiserver.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace wasd::kube {
namespace {

using testing::Eventually;
using testing::FakeApiServer;

const Resource kConfigMaps{"v1", "configmaps"};

nlohmann::json ConfigMap(const std::string& name, const std::string& value = "1") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", {{"app", "x"}}}}},
          {"data", {{"k", value}}}};
}

// Collects watch events from another thread.
struct Collected {
  std::mutex mu;
  std::vector<WatchEvent> events;
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return events.size();
  }
  bool Has(WatchEventType type) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& e : events) {
      if (e.type == type) return true;
    }
    return false;
  }
};

TEST_CASE("watch: events, bookmarks, query, and stop", "[loopback][watch]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  auto created = client.Create(kConfigMaps, "w", ConfigMap("a"));
  REQUIRE(created.ok());
  const std::string start_rv = created->at("metadata").at("resourceVersion");

  Collected got;
  Status result;
  std::stop_source stop;
  std::jthread watcher([&] {
    WatchOptions wo;
    wo.resource_version = start_rv;
    wo.label_selector = "app=x";
    wo.stop = stop.get_token();
    result = client.Watch(kConfigMaps, "w", wo, [&](const WatchEvent& e) {
      std::lock_guard<std::mutex> lock(got.mu);
      got.events.push_back(e);
      return true;
    });
  });
  REQUIRE(Eventually(
      [&] { return !server.RequestsFor("GET", "/api/v1/namespaces/w/configmaps").empty(); }));
  REQUIRE(client.Patch(kConfigMaps, "w", "a", PatchType::kMerge, {{"data", {{"k", "2"}}}}).ok());
  REQUIRE(client.Create(kConfigMaps, "w", ConfigMap("b")).ok());
  REQUIRE(client.Delete(kConfigMaps, "w", "a").ok());
  REQUIRE(Eventually([&] { return got.size() == 3; }));
  server.Bookmark();
  REQUIRE(Eventually([&] { return got.Has(WatchEventType::kBookmark); }));

  stop.request_stop();
  watcher.join();
  CHECK(result.cancelled());
  {
    std::lock_guard<std::mutex> lock(got.mu);
    REQUIRE(got.events.size() == 4);
    CHECK(got.events[0].type == WatchEventType::kModified);
    CHECK(got.events[1].type == WatchEventType::kAdded);
    CHECK(got.events[1].object["metadata"]["name"] == "b");
    CHECK(got.events[2].type == WatchEventType::kDeleted);
    CHECK(got.events[3].type == WatchEventType::kBookmark);
    CHECK_FALSE(got.events[3].ResourceVersion().empty());
  }
  auto log = server.RequestsFor("GET", "/api/v1/namespaces/w/configmaps");
  REQUIRE(log.size() == 1);
  CHECK(log[0]["query"]["watch"] == "true");
  CHECK(log[0]["query"]["allowWatchBookmarks"] == "true");
  CHECK(log[0]["query"]["resourceVersion"] == start_rv);
  CHECK(log[0]["query"]["labelSelector"] == "app=x");
  CHECK(log[0]["query"]["timeoutSeconds"] == "300");
}

TEST_CASE("watch: returning false from the callback ends the watch", "[loopback][watch]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "w", ConfigMap("a")).ok());
  REQUIRE(client.Create(kConfigMaps, "w", ConfigMap("b")).ok());
  int seen = 0;
  WatchOptions wo;
  wo.resource_version = "1";
  Status s = client.Watch(kConfigMaps, "w", wo, [&](const WatchEvent&) { return ++seen < 1; });
  CHECK(s.ok());
  CHECK(seen == 1);
}

TEST_CASE("watch: server timeout ends the stream cleanly", "[loopback][watch]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  WatchOptions wo;
  wo.timeout_seconds = 1;
  Status s = client.Watch(kConfigMaps, "w", wo, [](const WatchEvent&) { return true; });
  CHECK(s.ok());
}

TEST_CASE("watch: a too-old resourceVersion gives gone() (ERROR 410 event)", "[loopback][watch]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  auto created = client.Create(kConfigMaps, "w", ConfigMap("a"));
  REQUIRE(created.ok());
  REQUIRE(client.Create(kConfigMaps, "w", ConfigMap("b")).ok());
  server.Compact();
  int seen = 0;
  WatchOptions wo;
  wo.resource_version = created->at("metadata").at("resourceVersion");
  Status s = client.Watch(kConfigMaps, "w", wo, [&](const WatchEvent&) { return ++seen > 0; });
  CHECK(s.gone());
  CHECK(s.http_code() == 410);
  CHECK(s.reason() == "Expired");
  CHECK(seen == 0);  // the ERROR event is returned, not delivered
}

TEST_CASE("watch: a dropped connection is reported as unreachable", "[loopback][watch]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  Status result;
  std::jthread watcher(
      [&] { result = client.Watch(kConfigMaps, "w", {}, [](const WatchEvent&) { return true; }); });
  REQUIRE(Eventually(
      [&] { return !server.RequestsFor("GET", "/api/v1/namespaces/w/configmaps").empty(); }));
  server.DropWatches();
  watcher.join();
  CHECK(result.unreachable());
  CHECK_THAT(result.message(), Catch::Contains("connection lost"));
}

// Records handler calls of an informer.
struct Recorder {
  std::mutex mu;
  std::vector<std::string> calls;  // "add a", "update a 2", "delete a"
  void Add(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(s);
  }
  int Count(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    return static_cast<int>(std::count(calls.begin(), calls.end(), s));
  }
  EventHandlers Handlers() {
    EventHandlers h;
    h.on_add = [this](const ObjectPtr& o) {
      Add("add " + (*o)["metadata"]["name"].get<std::string>());
    };
    h.on_update = [this](const ObjectPtr& old_obj, const ObjectPtr& o) {
      Add((old_obj == o ? "resync " : "update ") + (*o)["metadata"]["name"].get<std::string>() +
          " " + (*o)["data"]["k"].get<std::string>());
    };
    h.on_delete = [this](const ObjectPtr& o) {
      Add("delete " + (*o)["metadata"]["name"].get<std::string>());
    };
    return h;
  }
};

InformerOptions Options() {
  InformerOptions o;
  o.resource = kConfigMaps;
  o.namespace_ = "inf";
  o.page_size = 2;
  o.backoff.initial = std::chrono::milliseconds(20);
  o.backoff.max = std::chrono::milliseconds(200);
  return o;
}

TEST_CASE("informer: list, watch, handlers, Get/List by namespace", "[loopback][informer]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  for (const char* n : {"a", "b", "c"})
    REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap(n)).ok());
  REQUIRE(client.Create(kConfigMaps, "elsewhere", ConfigMap("x")).ok());

  Informer informer(client, Options());
  Recorder rec;
  informer.AddEventHandlers(rec.Handlers());
  CHECK_FALSE(informer.HasSynced());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  CHECK(informer.List("inf").size() == 3);
  CHECK(informer.List().size() == 3);
  CHECK(informer.List("elsewhere").empty());
  REQUIRE(informer.Get("inf", "b"));
  CHECK((*informer.Get("inf", "b"))["data"]["k"] == "1");
  CHECK(informer.Get("inf", "x") == nullptr);
  CHECK(rec.Count("add a") == 1);

  REQUIRE(client.Patch(kConfigMaps, "inf", "b", PatchType::kMerge, {{"data", {{"k", "2"}}}}).ok());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("d")).ok());
  REQUIRE(client.Delete(kConfigMaps, "inf", "a").ok());
  REQUIRE(Eventually([&] { return rec.Count("delete a") == 1; }));
  CHECK(rec.Count("update b 2") == 1);
  CHECK(rec.Count("add d") == 1);
  CHECK(informer.Get("inf", "a") == nullptr);
  CHECK((*informer.Get("inf", "b"))["data"]["k"] == "2");
  CHECK(informer.lists() == 1);
  informer.Stop();
  // The initial list was paged (page_size 2 over 3 objects).
  auto lists = server.RequestsFor("GET", "/api/v1/namespaces/inf/configmaps");
  REQUIRE(lists.size() >= 3);
  CHECK(lists[0]["query"]["limit"] == "2");
  CHECK_FALSE(lists[0]["query"].contains("continue"));
  CHECK_FALSE(lists[1]["query"].value("continue", "").empty());
}

TEST_CASE("informer: a projected, compact cache keeps and delivers only the projection",
          "[loopback][informer][projection]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  nlohmann::json big = ConfigMap("a");
  big["data"]["bulk"] = std::string(4096, 'x');
  REQUIRE(client.Create(kConfigMaps, "inf", big).ok());
  InformerOptions o = Options();
  o.projection = std::make_shared<const base::JsonProjection>(
      std::vector<std::vector<std::string>>{{"metadata", "name"},
                                            {"metadata", "namespace"},
                                            {"metadata", "resourceVersion"},
                                            {"data", "k"}});
  o.compact = true;
  Informer informer(client, o);
  std::vector<nlohmann::json> seen;
  std::mutex mu;
  EventHandlers h;
  h.on_add = [&](const ObjectPtr& obj) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(*obj);
  };
  h.on_update = [&](const ObjectPtr& old_obj, const ObjectPtr& obj) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back({{"old", *old_obj}, {"new", *obj}});
  };
  informer.AddEventHandlers(h);
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  const ObjectPtr got = informer.Get("inf", "a");
  REQUIRE(got);
  CHECK(got->at("data") == nlohmann::json{{"k", "1"}});
  CHECK_FALSE(got->at("metadata").contains("labels"));
  CHECK_FALSE(got->at("metadata").at("resourceVersion").get<std::string>().empty());
  CHECK(informer.Keys() == std::vector<std::string>{"inf/a"});
  REQUIRE(client.Patch(kConfigMaps, "inf", "a", PatchType::kMerge, {{"data", {{"k", "2"}}}}).ok());
  REQUIRE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return seen.size() == 2;
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(seen[0] == *got);  // the ADD delivered what the cache keeps
    CHECK(seen[1]["old"] == *got);
    CHECK(seen[1]["new"]["data"] == nlohmann::json{{"k", "2"}});
  }
  CHECK(informer.Get("inf", "a")->at("data").at("k") == "2");
  CHECK(informer.List("inf").size() == 1);
  informer.Stop();
}

TEST_CASE("informer: the rest digest ignores only the status and the resourceVersion",
          "[unit][informer]") {
  const nlohmann::json a = {
      {"metadata", {{"name", "a"}, {"resourceVersion", "1"}, {"labels", {{"x", "1"}}}}},
      {"spec", {{"replicas", 2}}},
      {"status", {{"conditions", nlohmann::json::array()}}}};
  nlohmann::json b = a;
  b["metadata"]["resourceVersion"] = "2";
  b["status"]["conditions"].push_back({{"type", "GangScheduled"}});
  CHECK(RestDigest(a) == RestDigest(b));
  b.erase("status");
  CHECK(RestDigest(a) == RestDigest(b));
  for (const auto& [path, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"/spec/replicas", 3},
                                                           {"/metadata/labels/x", "2"},
                                                           {"/metadata/name", "b"},
                                                           {"/metadata/generation", 2},
                                                           {"/kind", "Deployment"}}) {
    nlohmann::json c = a;
    c[nlohmann::json::json_pointer(path)] = value;
    CHECK(RestDigest(a) != RestDigest(c));
  }
}

TEST_CASE("informer: quiet status updates are stored but reach no handler",
          "[loopback][informer]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("a")).ok());
  InformerOptions o = Options();
  o.compact = true;
  o.quiet_status_updates = true;
  Informer informer(client, o);
  Recorder rec;
  informer.AddEventHandlers(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  REQUIRE(
      client.Patch(kConfigMaps, "inf", "a", PatchType::kMerge, {{"status", {{"s", "1"}}}}).ok());
  REQUIRE(Eventually([&] {
    const ObjectPtr got = informer.Get("inf", "a");
    return got && got->contains("status");
  }));
  CHECK(rec.Count("update a 1") == 0);
  // A change of the rest is delivered, with the quietly stored status in the old object.
  ObjectPtr old_seen;
  std::mutex mu;
  EventHandlers h;
  h.on_update = [&](const ObjectPtr& old_obj, const ObjectPtr&) {
    std::lock_guard<std::mutex> lock(mu);
    old_seen = old_obj;
  };
  informer.AddEventHandlers(h);
  REQUIRE(client.Patch(kConfigMaps, "inf", "a", PatchType::kMerge, {{"data", {{"k", "2"}}}}).ok());
  REQUIRE(Eventually([&] { return rec.Count("update a 2") == 1; }));
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(old_seen);
  CHECK(old_seen->at("status") == nlohmann::json{{"s", "1"}});
  CHECK(rec.Count("update a 1") == 0);
  informer.Stop();
}

TEST_CASE("informer: re-watches after a dropped connection without relisting",
          "[loopback][informer]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("a")).ok());
  Informer informer(client, Options());
  Recorder rec;
  informer.AddEventHandlers(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  REQUIRE(Eventually([&] { return informer.watches() == 1; }));
  // Let the watch request reach the server before dropping it.
  REQUIRE(Eventually([&] {
    for (const auto& r : server.RequestsFor("GET", "/api/v1/namespaces/inf/configmaps")) {
      if (r["query"].contains("watch")) return true;
    }
    return false;
  }));
  server.DropWatches();
  REQUIRE(Eventually([&] { return informer.watches() >= 2; }));
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("b")).ok());
  REQUIRE(Eventually([&] { return informer.Get("inf", "b") != nullptr; }));
  CHECK(informer.lists() == 1);
  CHECK(rec.Count("add b") == 1);
  // The re-watch resumed from the last resourceVersion seen, not from scratch.
  std::vector<nlohmann::json> watches;
  for (const auto& r : server.RequestsFor("GET", "/api/v1/namespaces/inf/configmaps")) {
    if (r["query"].contains("watch")) watches.push_back(r);
  }
  REQUIRE(watches.size() >= 2);
  CHECK(watches[1]["query"]["resourceVersion"] == watches[0]["query"]["resourceVersion"]);
}

TEST_CASE("informer: watches the server ends at once with nothing in them back off",
          "[loopback][informer]") {
  // A proxy that closes every watch stream at once (L7): re-watching without a
  // pause would spin at hundreds of requests a second.
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("a")).ok());
  server.AddFault({{"code", "end"}, {"watch", true}});  // every watch ends at once, empty
  Informer informer(client, Options());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const int watches = informer.watches();
  informer.Stop();
  // Backoff 20 ms doubling to 200 ms: about 12 watches in 2 s; a spin would
  // make hundreds (each loopback round trip is ~1 ms).
  CHECK(watches >= 2);
  CHECK(watches <= 30);
  CHECK(informer.lists() == 1);  // an empty watch is not a reason to relist
}

TEST_CASE("informer: 410 Gone on re-watch triggers a relist", "[loopback][informer]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("a")).ok());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("gone-soon")).ok());
  Informer informer(client, Options());
  Recorder rec;
  informer.AddEventHandlers(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  REQUIRE(Eventually([&] {
    for (const auto& r : server.RequestsFor("GET", "/api/v1/namespaces/inf/configmaps")) {
      if (r["query"].contains("watch")) return true;
    }
    return false;
  }));
  // Drop the watch and hold the re-watch while "c" is created and history
  // compacted: the re-watch from the old resourceVersion gets ERROR 410, and
  // the informer lists again, which brings "c".
  server.HoldWatches(true);
  server.DropWatches();
  REQUIRE(Eventually([&] { return informer.watches() >= 2; }));
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("c")).ok());
  server.Compact();
  server.HoldWatches(false);
  REQUIRE(Eventually([&] { return informer.Get("inf", "c") != nullptr; }));
  CHECK(informer.lists() == 2);
  CHECK(rec.Count("add a") == 1);  // unchanged objects are not re-announced
  CHECK(rec.Count("add c") == 1);
}

TEST_CASE("informer: a relist reports objects deleted while disconnected", "[loopback][informer]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("a")).ok());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("b")).ok());
  Informer informer(client, Options());
  Recorder rec;
  informer.AddEventHandlers(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  auto watch_requests = [&] {
    int n = 0;
    for (const auto& r : server.RequestsFor("GET", "/api/v1/namespaces/inf/configmaps")) {
      if (r["query"].contains("watch")) ++n;
    }
    return n;
  };
  REQUIRE(Eventually([&] { return watch_requests() == 1; }));
  // Disconnect the informer and hold its re-watch at the server while "a" is
  // deleted and history compacted: the DELETED event is never streamed, the
  // re-watch gets 410, and only the relist can discover the deletion.
  server.HoldWatches(true);
  server.DropWatches();
  REQUIRE(Eventually([&] { return watch_requests() == 2; }));
  REQUIRE(client.Delete(kConfigMaps, "inf", "a").ok());
  server.Compact();
  server.HoldWatches(false);
  REQUIRE(Eventually([&] { return rec.Count("delete a") == 1; }));
  CHECK(informer.lists() == 2);
  CHECK(informer.Get("inf", "a") == nullptr);
  CHECK(informer.List("inf").size() == 1);
  CHECK(rec.Count("add b") == 1);
}

TEST_CASE("informer: periodic resync re-delivers cached objects", "[loopback][informer]") {
  FakeApiServer server;
  Client client(server.BaseConfig());
  REQUIRE(client.Create(kConfigMaps, "inf", ConfigMap("a")).ok());
  InformerOptions o = Options();
  o.resync = std::chrono::milliseconds(100);
  Informer informer(client, o);
  Recorder rec;
  informer.AddEventHandlers(rec.Handlers());
  informer.Start();
  REQUIRE(informer.WaitForSync(std::chrono::seconds(15)));
  REQUIRE(Eventually([&] { return rec.Count("resync a 1") >= 2; }));
  informer.Stop();
}

}  // namespace
}  // namespace wasd::kube
