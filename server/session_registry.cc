#include "server/session_registry.h"

#include <utility>
#include <vector>

namespace wasd::server {

std::uint64_t SessionRegistry::Add(std::weak_ptr<DrainableSession> session) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t id = next_id_++;
  sessions_.emplace(id, std::move(session));
  return id;
}

void SessionRegistry::Remove(std::uint64_t id) {
  std::function<void()> fire;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(id);
    if (sessions_.empty() && on_empty_) fire = std::exchange(on_empty_, nullptr);
  }
  if (fire) fire();
}

void SessionRegistry::DrainAll(std::function<void()> on_empty) {
  std::vector<std::shared_ptr<DrainableSession>> live;
  std::function<void()> fire;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, weak] : sessions_) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
    if (sessions_.empty()) {
      fire = std::move(on_empty);
    } else {
      on_empty_ = std::move(on_empty);
    }
  }
  for (const auto& s : live) s->Drain();
  if (fire) fire();
}

void SessionRegistry::ClearOnEmpty() {
  std::lock_guard<std::mutex> lock(mu_);
  on_empty_ = nullptr;
}

std::size_t SessionRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

}  // namespace wasd::server
