#include "reconciler/deleted_names.h"

namespace wasd::reconciler {

void DeletedNames::ExpireLocked(Clock::time_point now) const {
  while (!order_.empty() && now - order_.front().first > kDeletedNamesFor) {
    const auto it = at_.find(order_.front().second);
    // A newer deletion of the same name keeps its entry.
    if (it != at_.end() && it->second == order_.front().first) at_.erase(it);
    order_.pop_front();
  }
}

void DeletedNames::Record(const std::string& ns, const std::string& name) {
  const Clock::time_point now = now_();
  std::lock_guard lock(mu_);
  ExpireLocked(now);
  std::string key = ns + "/" + name;
  at_[key] = now;
  order_.emplace_back(now, std::move(key));
  while (order_.size() > max_) {
    // Dropped before its time: until the time it would have lasted, every
    // name reads as deleted.
    overflowed_until_ = std::max(overflowed_until_, order_.front().first + kDeletedNamesFor);
    const auto it = at_.find(order_.front().second);
    if (it != at_.end() && it->second == order_.front().first) at_.erase(it);
    order_.pop_front();
  }
}

bool DeletedNames::Seen(const std::string& ns, const std::string& name) const {
  const Clock::time_point now = now_();
  std::lock_guard lock(mu_);
  ExpireLocked(now);
  if (now < overflowed_until_) return true;
  return at_.count(ns + "/" + name) > 0;
}

std::size_t DeletedNames::size() const {
  std::lock_guard lock(mu_);
  return at_.size();
}

}  // namespace wasd::reconciler
