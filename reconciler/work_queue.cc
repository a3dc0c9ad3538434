#include "reconciler/work_queue.h"

#include <algorithm>

namespace wasd::reconciler {

std::chrono::milliseconds BackoffFor(const WorkQueueOptions& options, int failures) {
  // 2^31 ms is already far beyond any sensible max; stop doubling there.
  constexpr int kMaxShift = 31;
  const int shift = std::clamp(failures, 0, kMaxShift);
  const long double delay = static_cast<long double>(options.base_delay.count()) *
                            static_cast<long double>(1ULL << shift);
  if (delay >= static_cast<long double>(options.max_delay.count())) return options.max_delay;
  return std::chrono::milliseconds(static_cast<std::int64_t>(delay));
}

WorkQueue::WorkQueue(WorkQueueOptions options, std::function<Clock::time_point()> now)
    : options_(options), now_(std::move(now)) {}

void WorkQueue::AddLocked(const std::string& key, Clock::time_point now) {
  if (shutting_down_) return;
  if (!dirty_.insert(key).second) return;  // already queued (or to be re-queued)
  ++adds_;
  EraseDelayedLocked(key);
  if (processing_.count(key) > 0) return;  // Done() re-queues it
  queue_.push_back(key);
  ready_since_[key] = now;
  cv_.notify_one();
}

void WorkQueue::EraseDelayedLocked(const std::string& key) {
  const auto it = delayed_.find(key);
  if (it == delayed_.end()) return;
  due_.erase({it->second, key});
  delayed_.erase(it);
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mu_);
  AddLocked(key, now_());
}

void WorkQueue::AddAfter(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  const Clock::time_point now = now_();
  if (delay.count() <= 0) {
    AddLocked(key, now);
    return;
  }
  if (shutting_down_ || dirty_.count(key) > 0) return;  // already due sooner
  Clock::time_point due = now + delay;
  if (delay >= kBatchedDelay) {
    const Clock::duration tick = kDelayTick;
    const Clock::duration since = due.time_since_epoch();
    // Up to the tick boundary (an exact boundary stays); non-negative for a
    // steady clock.
    due += (tick - since % tick) % tick;
  }
  auto [it, inserted] = delayed_.emplace(key, due);
  if (inserted) {
    due_.emplace(due, key);
  } else if (due < it->second) {
    due_.erase({it->second, key});
    it->second = due;
    due_.emplace(due, key);
  }
  cv_.notify_all();  // a sleeping Get() may have to wake sooner
}

void WorkQueue::AddRateLimited(const std::string& key) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard lock(mu_);
    int& failures = failures_[key];
    delay = BackoffFor(options_, failures);
    ++failures;
    ++retries_;
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  const auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

WorkQueue::Clock::time_point WorkQueue::PromoteLocked(Clock::time_point now) {
  while (!due_.empty() && due_.begin()->first <= now) {
    const std::string key = due_.begin()->second;
    EraseDelayedLocked(key);
    AddLocked(key, now);
  }
  return due_.empty() ? Clock::time_point::max() : due_.begin()->first;
}

bool WorkQueue::PopLocked(std::string* key, std::chrono::nanoseconds* waited,
                          Clock::time_point now) {
  if (queue_.empty()) return false;
  *key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(*key);
  processing_.insert(*key);
  const auto since = ready_since_.find(*key);
  if (since != ready_since_.end()) {
    if (waited != nullptr) *waited = now - since->second;
    ready_since_.erase(since);
  } else if (waited != nullptr) {
    *waited = std::chrono::nanoseconds(0);
  }
  return true;
}

bool WorkQueue::Get(std::string* key, std::chrono::nanoseconds* waited) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (shutting_down_) return false;
    const Clock::time_point now = now_();
    const Clock::time_point next_due = PromoteLocked(now);
    if (PopLocked(key, waited, now)) return true;
    if (next_due == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, next_due);
    }
  }
}

bool WorkQueue::TryGet(std::string* key, std::chrono::nanoseconds* waited) {
  std::lock_guard lock(mu_);
  if (shutting_down_) return false;
  const Clock::time_point now = now_();
  PromoteLocked(now);
  return PopLocked(key, waited, now);
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) > 0 && !shutting_down_) {
    queue_.push_back(key);
    ready_since_[key] = now_();
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::shutting_down() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

std::size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

std::uint64_t WorkQueue::adds() const {
  std::lock_guard lock(mu_);
  return adds_;
}

std::uint64_t WorkQueue::retries() const {
  std::lock_guard lock(mu_);
  return retries_;
}

std::size_t WorkQueue::DelayedLen() const {
  std::lock_guard lock(mu_);
  return delayed_.size();
}

}  // namespace wasd::reconciler
