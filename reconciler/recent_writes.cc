#include "reconciler/recent_writes.h"

#include <charconv>
#include <cstdint>

namespace wasd::reconciler {

using planner::NameOf;
using planner::NamespaceOf;
using planner::Object;
using planner::ResourceVersionOf;
using planner::UidOf;

namespace {

bool ParseVersion(const std::string& s, std::uint64_t* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
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

void RecentWrites::ExpireTombstones() const {
  const Clock::time_point now = now_();
  while (!gone_order_.empty() && now - gone_order_.front().first > kRecentWriteTtl) {
    const auto it = gone_.find(gone_order_.front().second);
    if (it != gone_.end() && it->second == gone_order_.front().first) gone_.erase(it);
    gone_order_.pop_front();
  }
}

void RecentWrites::Record(Kind kind, const Object& object) {
  if (object == nullptr) return;
  std::lock_guard lock(mu_);
  ExpireTombstones();
  if (gone_.count(UidOf(*object)) > 0) return;  // the watch saw it deleted already
  entries_[KeyOf(kind, NamespaceOf(*object), NameOf(*object))] =
      Entry{object, UidOf(*object), ResourceVersionOf(*object), now_()};
}

void RecentWrites::RecordDeleted(Kind kind, const std::string& ns, const std::string& name,
                                 const std::string& uid) {
  std::lock_guard lock(mu_);
  entries_[KeyOf(kind, ns, name)] = Entry{nullptr, uid, "", now_()};
}

void RecentWrites::Observe(Kind kind, const nlohmann::json& object, bool deleted) {
  std::lock_guard lock(mu_);
  ExpireTombstones();
  if (deleted) {
    const std::string uid = UidOf(object);
    if (!uid.empty()) {
      const Clock::time_point now = now_();
      gone_[uid] = now;
      gone_order_.emplace_back(now, uid);
    }
  }
  const auto it = entries_.find(KeyOf(kind, NamespaceOf(object), NameOf(object)));
  if (it == entries_.end()) return;
  const Entry& e = it->second;
  if (deleted) {
    entries_.erase(it);  // a DELETED event makes the cache authoritative again
    return;
  }
  if (e.object == nullptr) {
    // Deleted by us: only a different object under the name (a new one, or
    // any object when the deleted one's uid is unknown) ends the entry.
    if (e.uid.empty() || UidOf(object) != e.uid) entries_.erase(it);
    return;
  }
  if (UidOf(object) != e.uid || VersionAtLeast(ResourceVersionOf(object), e.resource_version)) {
    entries_.erase(it);
  }
}

Object RecentWrites::Resolve(Kind kind, const std::string& ns, const std::string& name,
                             const Object& cached) const {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(KeyOf(kind, ns, name));
  if (it == entries_.end()) return cached;
  const Entry& e = it->second;
  if (now_() - e.at > kRecentWriteTtl) {
    entries_.erase(it);
    return cached;
  }
  if (e.object == nullptr) {
    // Deleted by us: the cached copy of that same object is stale; a cached
    // object with another uid is a newer one.
    if (cached != nullptr && !e.uid.empty() && UidOf(*cached) != e.uid) return cached;
    return nullptr;
  }
  if (cached != nullptr && UidOf(*cached) == e.uid &&
      VersionAtLeast(ResourceVersionOf(*cached), e.resource_version)) {
    return cached;
  }
  return e.object;
}

std::size_t RecentWrites::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace wasd::reconciler
