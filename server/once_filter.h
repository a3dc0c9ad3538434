// OnceFilter: says whether a key is seen for the first time, so that a
// condition worth one log line (an AdmissionReview for a resource the path
// does not answer, docs/design.md Q18) is logged once per distinct key, not once
// per request. The keys come from requests, so the set is bounded: after
// `capacity` keys every new key is reported as seen (not logged again).
//
// Thread-safe: First() takes a mutex; it runs only for the rare requests that
// carry such a condition.
#ifndef WASD_SERVER_ONCE_FILTER_H_
#define WASD_SERVER_ONCE_FILTER_H_

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace wasd::server {

class OnceFilter {
 public:
  explicit OnceFilter(std::size_t capacity) : capacity_(capacity) {}

  // True the first time `key` is passed, while fewer than `capacity` keys
  // are remembered; false otherwise.
  bool First(std::string_view key);

 private:
  const std::size_t capacity_;
  std::mutex mu_;
  std::unordered_set<std::string> seen_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_ONCE_FILTER_H_
