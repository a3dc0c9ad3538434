// ObjectIndex: a secondary index over one informer's objects — index key
// (e.g. "ns/<deployment>") → object names — kept by the informer's event
// handlers, so a reconcile finds "the ReplicaSets of this Deployment" or "the
// gated pods of this ReplicaSet" without scanning the whole cache.
//
// Thread-safe: all methods may be called from any thread.
#ifndef WASD_RECONCILER_OBJECT_INDEX_H_
#define WASD_RECONCILER_OBJECT_INDEX_H_

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace wasd::reconciler {

class ObjectIndex {
 public:
  // Files object `name` (in the index key's namespace) under `index_key`, or
  // under nothing when `index_key` is empty; replaces its earlier entry.
  // `object_key` identifies the object ("ns/name").
  void Set(const std::string& object_key, const std::string& name, const std::string& index_key);
  void Remove(const std::string& object_key);
  // Object names filed under `index_key`, sorted.
  std::vector<std::string> Lookup(const std::string& index_key) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>> by_index_;                 // guarded by mu_
  std::map<std::string, std::pair<std::string, std::string>> by_object_;  // key -> (index, name)
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_OBJECT_INDEX_H_
