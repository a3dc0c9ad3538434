// Informer: a shared, read-only cache of one resource type kept current by
// list + watch, with event handlers — the building block of the reconciler's
// caches and work queue.
//
// Generic over Resource + namespace + label/field selector. Its thread:
//   1. LIST (paged) -> replace the cache; ADD for new keys, UPDATE for changed
//      ones, DELETE for keys that vanished; HasSynced() becomes true once
//      the first full list has been delivered to the handlers.
//   2. WATCH from the list's resourceVersion with bookmarks; apply each event
//      to the cache, then call the handlers. Bookmarks only advance the
//      resourceVersion.
//   3. Stream ended -> re-watch from the last resourceVersion; dropped
//      connection / malformed line -> re-watch after backoff; 410 Gone ->
//      relist (step 1); other errors -> backoff, then relist.
//   4. Every `resync` (if non-zero) UPDATE(obj, obj) is delivered for every
//      cached object, so level-triggered handlers re-check the world.
//
// Handlers run on the informer's threads (list/watch, and resync), one at a
// time, after the cache has been updated; they must be quick (enqueue a key)
// and must not call Stop().
//
// Thread-safe: Get/List/HasSynced from any thread; Start/Stop from the owner.
// Cached objects are immutable and shared (shared_ptr<const json>).
#ifndef WASD_KUBE_INFORMER_H_
#define WASD_KUBE_INFORMER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_projection.h"
#include "kube/backoff.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "kube/watch_decoder.h"

namespace wasd::kube {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

struct InformerOptions {
  Resource resource;
  std::string namespace_;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  std::int64_t page_size = 500;
  // Periodic UPDATE(obj, obj) for every object; 0 = never.
  std::chrono::milliseconds resync{0};
  // Waits between failed list/watch attempts.
  BackoffPolicy backoff;
  // Server-side watch length before re-watching (timeoutSeconds).
  std::int64_t watch_timeout_seconds = 300;
  // The members of each object the cache keeps, decoded straight from the
  // list body and the watch stream (base/json_projection.h); null keeps whole
  // objects. Handlers and Get/List see only the projected members.
  std::shared_ptr<const base::JsonProjection> projection;
  // Keep each cached object encoded (MessagePack, ~1/6 of a decoded
  // nlohmann::json's heap) and decode it on Get/List: for caches of tens of
  // thousands of objects, where memory matters more than the microseconds of
  // a decode per read. Handlers still get the decoded object.
  bool compact = false;
  // An update that changes only the object's status (and its
  // resourceVersion) is stored but given to no handler: for readers that
  // read the status from the cache yet react only to the rest (the
  // reconciler's Deployments, whose status the Deployment controller and the
  // gang doctor write). Told apart by a 64-bit digest of the rest kept with
  // each object (RestDigest), so the old object is not decoded; a spec
  // change whose digest collides with the old one waits for the next resync.
  bool quiet_status_updates = false;
};

// The digest of `object` without its status and its metadata.resourceVersion
// (InformerOptions::quiet_status_updates). Pure.
std::uint64_t RestDigest(const nlohmann::json& object);

struct EventHandlers {
  std::function<void(const ObjectPtr& obj)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  // The last known state of the deleted object.
  std::function<void(const ObjectPtr& obj)> on_delete;
};

// "namespace/name", or "name" for cluster-scoped objects.
std::string ObjectKey(const nlohmann::json& object);
std::string ObjectKey(std::string_view ns, std::string_view name);

class Informer {
 public:
  // `client` must outlive the Informer.
  Informer(Client& client, InformerOptions options);
  ~Informer();  // Stop()s
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Adds handlers; only before Start().
  void AddEventHandlers(EventHandlers handlers);

  // Starts the list+watch thread. Call once.
  void Start();
  // Stops the threads and waits for them (an open watch or a backoff sleep
  // is cancelled at once). Idempotent.
  void Stop();

  // Moves the informer to `resource` (the same objects served through
  // another path: an API version changed on the server). Stops the
  // list+watch, keeps the cache (readers see the last known objects all the
  // while) and, when it was started, starts again with a full list of the
  // new path, which is applied as a relist: only what differs (by
  // resourceVersion) reaches the handlers. From the owner's thread, never
  // from a handler.
  void Retarget(Resource resource);
  // The resource listed and watched.
  Resource resource() const;

  // True once the first full LIST has been applied.
  bool HasSynced() const;
  // Blocks until HasSynced() or the timeout; returns HasSynced().
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  // The cached object, or nullptr.
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  // Every cached object in namespace `ns` ("" = all), ordered by key.
  // With `compact`, each is decoded: prefer Keys() + Get() over a large cache.
  std::vector<ObjectPtr> List(std::string_view ns = {}) const;
  // The keys (ObjectKey) of every cached object, ordered.
  std::vector<std::string> Keys() const;
  // The resourceVersion the cache reflects ("" before the first list).
  std::string LastResourceVersion() const;
  // Counters for tests and metrics.
  int lists() const { return lists_.load(); }
  int watches() const { return watches_.load(); }

 private:
  void Run(const std::stop_token& stop);
  Status ListAndReplace(const std::stop_token& stop);
  Status WatchOnce(const std::stop_token& stop);
  void Apply(const WatchEvent& event);
  // Calls the handlers for one change, serialised with every other delivery.
  void Deliver(WatchEventType type, const ObjectPtr& old_obj, const ObjectPtr& new_obj);
  void ResyncLoop(const std::stop_token& stop);

  Client& client_;
  InformerOptions options_;
  std::vector<EventHandlers> handlers_;  // fixed after Start()
  std::mutex handler_mu_;                // one delivery at a time

  // One cached object: decoded, or encoded when options_.compact.
  struct Slot {
    ObjectPtr object;
    std::string packed;
    std::string resource_version;
    std::uint64_t rest_digest = 0;  // quiet_status_updates only
  };
  Slot MakeSlot(const ObjectPtr& object) const;
  static ObjectPtr Decode(const Slot& slot);

  mutable std::mutex mu_;
  mutable std::condition_variable synced_cv_;
  std::map<std::string, Slot, std::less<>> cache_;  // guarded by mu_
  std::string resource_version_;                    // guarded by mu_
  bool synced_ = false;                             // guarded by mu_

  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
  std::atomic<int> events_{0};  // watch events applied
  std::jthread thread_;
  std::jthread resync_thread_;
};

}  // namespace wasd::kube

#endif  // WASD_KUBE_INFORMER_H_
