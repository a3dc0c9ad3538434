// LeaderElector: runs LeaderElectionState against the API server — every
// retry period it reads the Lease, lets the state machine decide, and writes
// (create, or PUT with the read resourceVersion as the optimistic-concurrency
// precondition, so two candidates can never both win one round).
//
// `on_change(bool leading)` is called on the elector's thread whenever
// leadership starts or ends. Stop() releases the Lease if held (empty holder)
// so a successor takes over at once, then returns.
//
// Thread-safe: is_leader() from any thread; Start/Stop from the owner.
#ifndef WASD_RECONCILER_LEADER_ELECTOR_H_
#define WASD_RECONCILER_LEADER_ELECTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "planner/leader_election.h"
#include "reconciler/api.h"
#include "runtime/log.h"

namespace wasd::reconciler {

class LeaderElector {
 public:
  LeaderElector(Api& api, const runtime::Logger& log, planner::LeaderElectionConfig config,
                std::function<void(bool leading)> on_change);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  void Start();
  // Stops the loop and releases the Lease if this replica holds it.
  void Stop();
  // True while this replica leads and its last successful renewal began
  // less than renew_deadline ago (steady clock): a replica whose renewals
  // stall stops writing on its own, before another can take over at
  // lease_duration — even while a slow round is still waiting for an answer.
  bool is_leader() const;

 private:
  void Run(const std::stop_token& stop);
  void Round();
  void Release();
  void SetLeading(bool leading);

  Api& api_;
  const runtime::Logger& log_;
  std::function<void(bool)> on_change_;
  std::mutex mu_;  // guards state_ and lease_ between Round() and Release()
  planner::LeaderElectionState state_;
  nlohmann::json lease_;  // the Lease as last read or written
  std::atomic<bool> leading_{false};
  // When the round of the last successful Lease write started (steady clock,
  // nanoseconds since its epoch): the renewal holds from then on.
  std::atomic<std::int64_t> renewed_at_ns_{0};
  std::jthread thread_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_LEADER_ELECTOR_H_
