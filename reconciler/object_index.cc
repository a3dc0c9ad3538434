#include "reconciler/object_index.h"

namespace wasd::reconciler {

void ObjectIndex::Set(const std::string& object_key, const std::string& name,
                      const std::string& index_key) {
  std::lock_guard lock(mu_);
  const auto it = by_object_.find(object_key);
  if (it != by_object_.end()) {
    if (it->second.first == index_key) return;
    const auto bucket = by_index_.find(it->second.first);
    if (bucket != by_index_.end()) {
      bucket->second.erase(it->second.second);
      if (bucket->second.empty()) by_index_.erase(bucket);
    }
    by_object_.erase(it);
  }
  if (index_key.empty()) return;
  by_index_[index_key].insert(name);
  by_object_[object_key] = {index_key, name};
}

void ObjectIndex::Remove(const std::string& object_key) { Set(object_key, "", ""); }

std::vector<std::string> ObjectIndex::Lookup(const std::string& index_key) const {
  std::lock_guard lock(mu_);
  const auto it = by_index_.find(index_key);
  if (it == by_index_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace wasd::reconciler
