#include "server/once_filter.h"

namespace wasd::server {

bool OnceFilter::First(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (seen_.size() >= capacity_) return false;
  return seen_.emplace(key).second;
}

}  // namespace wasd::server
