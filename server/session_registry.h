// SessionRegistry: the set of live admission connections, so that shutdown
// can ask each to drain and learn when the last one is gone.
//
// Sessions register when they start and unregister in their destructor;
// that is once per connection, never per request, so the mutex is off the
// request path.
//
// Thread-safe: every method may be called from any thread. The on-empty
// callback runs on the thread that removed the last session (or inside
// DrainAll when none is left), outside the lock.
#ifndef WASD_SERVER_SESSION_REGISTRY_H_
#define WASD_SERVER_SESSION_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace wasd::server {

// A connection that can be asked to finish its current request and close.
class DrainableSession {
 public:
  virtual ~DrainableSession() = default;
  // Thread-safe; returns at once (the work happens on the session's strand).
  virtual void Drain() = 0;
};

class SessionRegistry {
 public:
  // Registers a session; returns the id to pass to Remove().
  std::uint64_t Add(std::weak_ptr<DrainableSession> session);
  void Remove(std::uint64_t id);

  // Asks every registered session to drain. `on_empty` runs once, as soon as
  // no session is registered (immediately if none is).
  void DrainAll(std::function<void()> on_empty);

  // Drops the on-empty callback (before tearing down what it refers to).
  void ClearOnEmpty();

  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::weak_ptr<DrainableSession>> sessions_;
  std::function<void()> on_empty_;
};

}  // namespace wasd::server

#endif  // WASD_SERVER_SESSION_REGISTRY_H_
