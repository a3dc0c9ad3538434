#include "reconciler/recent_writes.h"

#include <charconv>
#include <cstdint>
#include <memory>

#include "reconciler/projections.h"

namespace wasd::reconciler {

using objects::NameOf;
using objects::NamespaceOf;
using objects::Object;
using objects::ResourceVersionOf;
using objects::UidOf;

namespace {

bool ParseVersion(const std::string& s, std::uint64_t* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// What the cache of `kind` keeps (reconciler/projections.cc).
const base::JsonProjection& ProjectionOf(Kind kind) {
  return kind == Kind::kPod ? *PodProjection() : *SchedulingObjectProjection();
}

}  // namespace

bool VersionAtLeast(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::uint64_t va = 0;
  std::uint64_t vb = 0;
  return ParseVersion(a, &va) && ParseVersion(b, &vb) && va >= vb;
}

std::string RecentWrites::KeyOf(Kind kind, const std::string& ns, const std::string& name) {
  return std::to_string(static_cast<int>(kind)) + "/" + ns + "/" + name;
}

bool RecentWrites::Expired(const Entry& e, Clock::time_point now) const {
  const Clock::duration age = now - e.at;
  if (age <= kRecentWriteTtl) return false;
  if (age > kRecentWriteMaxAge) return true;
  // Kept past the TTL only while the watch is known not to have reached our
  // write (both versions decimal, the watch's older).
  std::uint64_t ours = 0;
  return !(ParseVersion(e.resource_version, &ours) && marks_[e.mark].second < ours);
}

std::size_t RecentWrites::MarkOf(Kind kind, const nlohmann::json& object) const {
  std::string name = std::to_string(static_cast<int>(kind)) + "/";
  const auto api_version = object.is_object() ? object.find("apiVersion") : object.end();
  if (api_version != object.end() && api_version->is_string()) {
    name += api_version->get_ref<const std::string&>();
  }
  for (std::size_t i = 0; i < marks_.size(); ++i) {
    if (marks_[i].first == name) return i;
  }
  marks_.emplace_back(std::move(name), 0);
  return marks_.size() - 1;
}

void RecentWrites::Sweep(Clock::time_point now) const {
  while (!gone_order_.empty() && now - gone_order_.front().first > kRecentWriteTtl) {
    const auto it = gone_.find(gone_order_.front().second);
    if (it != gone_.end() && it->second == gone_order_.front().first) gone_.erase(it);
    gone_order_.pop_front();
  }
  // Entries normally end by Observe; this bounds those whose object is
  // never planned again once its event was missed.
  if (now - last_sweep_ < kRecentWriteTtl) return;
  last_sweep_ = now;
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = Expired(it->second, now) ? entries_.erase(it) : std::next(it);
  }
}

void RecentWrites::Record(Kind kind, const Object& object) {
  if (object == nullptr) return;
  // Projected and encoded outside the lock.
  Entry e;
  e.uid = UidOf(*object);
  e.resource_version = ResourceVersionOf(*object);
  nlohmann::json::to_msgpack(ProjectionOf(kind).Project(*object), e.packed);
  e.packed.shrink_to_fit();
  const std::string key = KeyOf(kind, NamespaceOf(*object), NameOf(*object));
  std::lock_guard lock(mu_);
  const Clock::time_point now = now_();
  Sweep(now);
  if (gone_.count(e.uid) > 0) return;  // the watch saw it deleted already
  e.mark = MarkOf(kind, *object);
  std::uint64_t ours = 0;
  if (ParseVersion(e.resource_version, &ours) && marks_[e.mark].second >= ours) {
    // The watch delivered our version (or a newer one) before this answer:
    // the cache holds it already.
    entries_.erase(key);
    return;
  }
  e.at = now;
  entries_[key] = std::move(e);
}

void RecentWrites::RecordDeleted(Kind kind, const std::string& ns, const std::string& name,
                                 const std::string& uid) {
  std::lock_guard lock(mu_);
  Entry e;
  e.uid = uid;
  PutTombstone(kind, KeyOf(kind, ns, name), std::move(e), nullptr);
}

void RecentWrites::RecordGone(Kind kind, const nlohmann::json& final_state) {
  std::lock_guard lock(mu_);
  Entry e;
  e.uid = UidOf(final_state);
  e.resource_version = ResourceVersionOf(final_state);
  PutTombstone(kind, KeyOf(kind, NamespaceOf(final_state), NameOf(final_state)), std::move(e),
               &final_state);
}

void RecentWrites::PutTombstone(Kind kind, const std::string& key, Entry e,
                                const nlohmann::json* final_state) {
  const Clock::time_point now = now_();
  Sweep(now);
  e.at = now;
  // Without the final state the version is unknown and the mark unused.
  e.mark = MarkOf(kind, final_state != nullptr ? *final_state : nlohmann::json());
  entries_[key] = std::move(e);
}

void RecentWrites::Observe(Kind kind, const nlohmann::json& object, bool deleted) {
  const std::string uid = UidOf(object);
  const std::string rv = ResourceVersionOf(object);
  std::lock_guard lock(mu_);
  const Clock::time_point now = now_();
  std::uint64_t version = 0;
  if (ParseVersion(rv, &version)) {
    std::uint64_t& seen = marks_[MarkOf(kind, object)].second;
    if (version > seen) seen = version;
  }
  Sweep(now);
  if (deleted && !uid.empty()) {
    gone_[uid] = now;
    gone_order_.emplace_back(now, uid);
  }
  const auto it = entries_.find(KeyOf(kind, NamespaceOf(object), NameOf(object)));
  if (it == entries_.end()) return;
  const Entry& e = it->second;
  if (deleted) {
    entries_.erase(it);  // a DELETED event makes the cache authoritative again
    return;
  }
  if (e.packed.empty()) {
    // Deleted by us: only a different object under the name (a new one, or
    // any object when the deleted one's uid is unknown) ends the entry.
    if (e.uid.empty() || uid != e.uid) entries_.erase(it);
    return;
  }
  if (uid != e.uid || VersionAtLeast(rv, e.resource_version)) entries_.erase(it);
}

Object RecentWrites::Resolve(Kind kind, const std::string& ns, const std::string& name,
                             const CacheRead& read_cache) const {
  Entry e;
  {
    std::lock_guard lock(mu_);
    const auto it = entries_.find(KeyOf(kind, ns, name));
    if (it == entries_.end()) return read_cache();  // see the header: after the lookup
    if (Expired(it->second, now_())) {
      entries_.erase(it);
      return read_cache();
    }
    e = it->second;  // compared and decoded outside the lock
  }
  Object cached = read_cache();
  if (e.packed.empty()) {
    // Deleted by us: the cached copy of that same object is stale; a cached
    // object with another uid is a newer one.
    if (cached != nullptr && !e.uid.empty() && UidOf(*cached) != e.uid) return cached;
    return nullptr;
  }
  if (cached != nullptr && UidOf(*cached) == e.uid &&
      VersionAtLeast(ResourceVersionOf(*cached), e.resource_version)) {
    return cached;
  }
  // Encoded by Record from a valid value: decoding cannot fail.
  return std::make_shared<const nlohmann::json>(nlohmann::json::from_msgpack(e.packed));
}

std::size_t RecentWrites::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

std::size_t RecentWrites::encoded_bytes() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [key, e] : entries_) n += e.packed.size();
  return n;
}

}  // namespace wasd::reconciler
