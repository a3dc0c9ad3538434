#include "kube/informer.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>

namespace wasd::kube {

namespace {

// A watch the server ends sooner than this with no event in it is treated as
// a failure (backoff before the next one); a real watch lasts minutes.
constexpr std::chrono::seconds kShortWatch{1};

std::string Meta(const nlohmann::json& obj, const char* field) {
  if (!obj.is_object()) return {};
  auto md = obj.find("metadata");
  if (md == obj.end() || !md->is_object()) return {};
  auto v = md->find(field);
  if (v == md->end() || !v->is_string()) return {};
  return v->get<std::string>();
}

}  // namespace

std::string ObjectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

std::string ObjectKey(const nlohmann::json& object) {
  return ObjectKey(Meta(object, "namespace"), Meta(object, "name"));
}

Informer::Informer(Client& client, InformerOptions options)
    : client_(client), options_(std::move(options)) {}

Informer::~Informer() { Stop(); }

void Informer::AddEventHandlers(EventHandlers handlers) {
  handlers_.push_back(std::move(handlers));
}

void Informer::Start() {
  thread_ = std::jthread([this](const std::stop_token& stop) { Run(stop); });
  if (options_.resync.count() > 0) {
    resync_thread_ = std::jthread([this](const std::stop_token& stop) { ResyncLoop(stop); });
  }
}

void Informer::Stop() {
  for (std::jthread* t : {&resync_thread_, &thread_}) {
    if (t->joinable()) {
      t->request_stop();
      t->join();
    }
  }
}

void Informer::Retarget(Resource resource) {
  const bool running = thread_.joinable();
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    options_.resource = std::move(resource);
    // The cache holds the old resource's objects until the first list of the
    // new one: not synced (a caller that waits for sync must not plan on it).
    synced_ = false;
  }
  if (running) Start();
}

Resource Informer::resource() const {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.resource;
}

bool Informer::HasSynced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_;
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return synced_cv_.wait_for(lock, timeout, [this] { return synced_; });
}

std::uint64_t RestDigest(const nlohmann::json& object) {
  const std::hash<nlohmann::json> hash_json;
  const std::hash<std::string> hash_key;
  std::uint64_t h = 0x84222325cbf29ce4ULL;
  // boost::hash_combine's mixing step.
  const auto mix = [&h](std::uint64_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (!object.is_object()) return hash_json(object);
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == "status") continue;
    mix(hash_key(it.key()));
    if (it.key() != "metadata" || !it->is_object()) {
      mix(hash_json(*it));
      continue;
    }
    for (auto m = it->begin(); m != it->end(); ++m) {
      if (m.key() == "resourceVersion") continue;
      mix(hash_key(m.key()));
      mix(hash_json(*m));
    }
  }
  return h;
}

Informer::Slot Informer::MakeSlot(const ObjectPtr& object) const {
  Slot slot;
  slot.resource_version = Meta(*object, "resourceVersion");
  if (options_.quiet_status_updates) slot.rest_digest = RestDigest(*object);
  if (options_.compact) {
    nlohmann::json::to_msgpack(*object, slot.packed);
    slot.packed.shrink_to_fit();
  } else {
    slot.object = object;
  }
  return slot;
}

ObjectPtr Informer::Decode(const Slot& slot) {
  if (slot.object) return slot.object;
  // Encoded by MakeSlot from a valid value: decoding cannot fail.
  return std::make_shared<const nlohmann::json>(nlohmann::json::from_msgpack(slot.packed));
}

ObjectPtr Informer::Get(std::string_view ns, std::string_view name) const {
  const std::string key = ObjectKey(ns, name);
  Slot slot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return nullptr;
    if (it->second.object) return it->second.object;
    slot.packed = it->second.packed;  // decoded outside the lock
  }
  return Decode(slot);
}

std::vector<ObjectPtr> Informer::List(std::string_view ns) const {
  std::vector<ObjectPtr> out;
  std::lock_guard<std::mutex> lock(mu_);
  if (ns.empty()) {
    for (const auto& [key, slot] : cache_) out.push_back(Decode(slot));
    return out;
  }
  const std::string prefix = std::string(ns) + "/";
  for (auto it = cache_.lower_bound(prefix); it != cache_.end() && it->first.starts_with(prefix);
       ++it) {
    out.push_back(Decode(it->second));
  }
  return out;
}

std::vector<std::string> Informer::Keys() const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.reserve(cache_.size());
  for (const auto& [key, slot] : cache_) out.push_back(key);
  return out;
}

std::string Informer::LastResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

void Informer::Run(const std::stop_token& stop) {
  bool need_list = true;
  int failures = 0;
  int gone_streak = 0;  // 410s in a row with no event in between
  while (!stop.stop_requested()) {
    Status s;
    if (need_list) {
      s = ListAndReplace(stop);
      if (s.ok()) {
        need_list = false;
        failures = 0;
      }
    } else {
      const int events_before = events_.load();
      const auto watch_began = std::chrono::steady_clock::now();
      s = WatchOnce(stop);
      const bool got_events = events_.load() != events_before;
      if (got_events) gone_streak = 0;
      if (s.ok()) {
        // The server ended the watch. A normal end (its timeout) comes after
        // minutes: re-watch at once. One that ends almost at once with
        // nothing in it (a proxy closing streams) would spin: back off, as
        // client-go does for a "very short watch".
        if (got_events || std::chrono::steady_clock::now() - watch_began >= kShortWatch) {
          failures = 0;
          continue;
        }
        SleepUnlessStopped(BackoffDelay(options_.backoff, failures++, Random01()), stop);
        continue;
      }
      if (s.gone()) {
        // Our resourceVersion is too old: relist at once — unless a fresh
        // list's version was just refused too, then back off rather than
        // spin against a server that cannot serve a watch.
        need_list = true;
        if (gone_streak++ == 0) continue;
      }
      // An HTTP error on the watch request itself: start over with a list.
      if (s.kind() == Status::Kind::kHttp && !s.too_many_requests()) need_list = true;
    }
    if (!s.ok() && !s.cancelled()) {
      SleepUnlessStopped(BackoffDelay(options_.backoff, failures++, Random01()), stop);
    }
  }
}

Status Informer::ListAndReplace(const std::stop_token& stop) {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.limit = options_.page_size;
  lo.projection = options_.projection.get();
  lo.request.stop = stop;
  Result<ListResult> listed = client_.List(options_.resource, options_.namespace_, lo);
  ++lists_;
  if (!listed.ok()) {
    if (listed.status().not_found()) {
      // The resource is not served (any more): what the cache holds is no
      // longer a listing of it; synced again only after a list succeeds.
      std::lock_guard<std::mutex> lock(mu_);
      synced_ = false;
    }
    return listed.status();
  }
  std::map<std::string, ObjectPtr, std::less<>> fresh;
  for (auto& item : listed.value().items) {
    auto obj = std::make_shared<const nlohmann::json>(std::move(item));
    fresh.emplace(ObjectKey(*obj), std::move(obj));
  }
  listed.value().items.clear();
  std::map<std::string, Slot, std::less<>> slots;
  for (const auto& [key, obj] : fresh) slots.emplace(key, MakeSlot(obj));
  std::vector<std::pair<ObjectPtr, ObjectPtr>> changes;  // (old, new); new null = deleted
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, obj] : fresh) {
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        changes.emplace_back(nullptr, obj);
      } else if (const Slot& now = slots.at(key);
                 it->second.resource_version != now.resource_version &&
                 !(options_.quiet_status_updates && it->second.rest_digest == now.rest_digest)) {
        changes.emplace_back(Decode(it->second), obj);
      }
    }
    for (const auto& [key, slot] : cache_) {
      if (!fresh.contains(key)) changes.emplace_back(Decode(slot), nullptr);
    }
    cache_ = std::move(slots);
    resource_version_ = listed.value().resource_version;
  }
  for (const auto& [old_obj, new_obj] : changes) {
    if (!old_obj) {
      Deliver(WatchEventType::kAdded, nullptr, new_obj);
    } else if (!new_obj) {
      Deliver(WatchEventType::kDeleted, old_obj, nullptr);
    } else {
      Deliver(WatchEventType::kModified, old_obj, new_obj);
    }
  }
  // Synced only once the handlers have seen the first list: a caller woken by
  // WaitForSync finds every listed object both in the cache and delivered.
  {
    std::lock_guard<std::mutex> lock(mu_);
    synced_ = true;
  }
  synced_cv_.notify_all();
  return Status::Ok();
}

Status Informer::WatchOnce(const std::stop_token& stop) {
  WatchOptions wo;
  wo.resource_version = LastResourceVersion();
  wo.label_selector = options_.label_selector;
  wo.field_selector = options_.field_selector;
  wo.allow_bookmarks = true;
  wo.timeout_seconds = options_.watch_timeout_seconds;
  wo.stop = stop;
  wo.projection = options_.projection.get();
  ++watches_;
  return client_.Watch(options_.resource, options_.namespace_, wo, [&](const WatchEvent& ev) {
    Apply(ev);
    return !stop.stop_requested();
  });
}

void Informer::Apply(const WatchEvent& event) {
  ++events_;
  const std::string rv = event.ResourceVersion();
  if (event.type == WatchEventType::kBookmark) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!rv.empty()) resource_version_ = rv;
    return;
  }
  auto obj = std::make_shared<const nlohmann::json>(event.object);
  const std::string key = ObjectKey(*obj);
  Slot slot = event.type == WatchEventType::kDeleted ? Slot{} : MakeSlot(obj);
  Slot old_slot;
  bool existed = false;
  bool quiet = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      existed = true;
      quiet = options_.quiet_status_updates && event.type == WatchEventType::kModified &&
              it->second.rest_digest == slot.rest_digest;
      // Only an update's handlers see the old object (a delete's see the
      // event's final state); it is decoded outside the lock.
      if (event.type != WatchEventType::kDeleted && !quiet) old_slot = it->second;
    }
    if (event.type == WatchEventType::kDeleted) {
      if (it != cache_.end()) cache_.erase(it);
    } else {
      cache_[key] = std::move(slot);
    }
    if (!rv.empty()) resource_version_ = rv;
  }
  if (event.type == WatchEventType::kDeleted) {
    Deliver(WatchEventType::kDeleted, obj, nullptr);  // the event carries the final state
  } else if (quiet) {
    return;  // only the status moved: stored, no handler
  } else if (existed) {
    Deliver(WatchEventType::kModified, Decode(old_slot), obj);
  } else {
    Deliver(WatchEventType::kAdded, nullptr, obj);
  }
}

void Informer::Deliver(WatchEventType type, const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
  std::lock_guard<std::mutex> lock(handler_mu_);
  for (const EventHandlers& h : handlers_) {
    if (type == WatchEventType::kAdded && h.on_add) h.on_add(new_obj);
    if (type == WatchEventType::kModified && h.on_update) h.on_update(old_obj, new_obj);
    if (type == WatchEventType::kDeleted && h.on_delete) h.on_delete(old_obj);
  }
}

void Informer::ResyncLoop(const std::stop_token& stop) {
  while (SleepUnlessStopped(options_.resync, stop)) {
    if (!HasSynced()) continue;
    // One object decoded at a time: a compact cache is never decoded whole.
    for (const std::string& key : Keys()) {
      if (stop.stop_requested()) return;
      ObjectPtr obj;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = cache_.find(key);
        if (it == cache_.end()) continue;
        if (it->second.object) {
          obj = it->second.object;
        } else {
          Slot copy;
          copy.packed = it->second.packed;
          obj = Decode(copy);
        }
      }
      Deliver(WatchEventType::kModified, obj, obj);
    }
  }
}

}  // namespace wasd::kube
