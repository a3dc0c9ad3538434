// Leader election on a coordination.k8s.io/v1 Lease, as a pure state machine
// (Boost.Redis style): given the Lease as last read from the API server and
// the time, it says what to write (create, acquire, renew, nothing) and
// whether this replica may act as the leader. The I/O loop around it lives in
// leader_elector.h.
//
// Rules (docs/design.md "leader election"; the client-go algorithm):
//  * Expiry is judged on this replica's own monotonic clock, from the moment
//    it last saw the Lease record change — never by comparing the holder's
//    timestamps with our wall clock (clocks of two nodes may disagree).
//  * A Lease held by another identity is taken over only when it was not
//    renewed for lease_duration, or when its holder released it (empty
//    holderIdentity).
//  * The leader renews every retry period; if no renewal succeeds for
//    renew_deadline it stops being the leader (before the others can take
//    over at lease_duration).
//  * Release: the leader writes an empty holder so a successor need not wait.
//
// Thread-compatible: one owner thread (the elector loop) drives it.
#ifndef WASD_PLANNER_LEADER_ELECTION_H_
#define WASD_PLANNER_LEADER_ELECTION_H_

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace wasd::planner {

struct LeaderElectionConfig {
  std::string lease_name = "wasd-reconciler";
  std::string lease_namespace = "wasd-system";
  std::string identity;  // hostname + random suffix
  // docs/design.md: 15 s / 10 s / 2 s, the values client-go-based controllers use.
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
};

// The part of Lease.spec the election reads and writes.
struct LeaseRecord {
  std::string holder;
  std::int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // MicroTime, as stored
  std::string renew_time;    // MicroTime, as stored
  std::int64_t transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

// Reads spec of a Lease object (missing members read as empty/0).
LeaseRecord LeaseRecordFrom(const nlohmann::json& lease);
// The Lease object to create or PUT: `base` (the stored Lease, or null for a
// create) with its spec replaced by `record`'s fields.
nlohmann::json LeaseObject(const nlohmann::json& base, const LeaderElectionConfig& config,
                           const LeaseRecord& record);
enum class LeaseWrite { kNone, kCreate, kUpdate };

struct ElectionStep {
  LeaseWrite write = LeaseWrite::kNone;
  LeaseRecord record;  // what to write when write != kNone
};

// L5: a leader may act only while its last successful renewal began less
// than `renew_deadline` before `now` (client-go bounds this with the renew
// deadline's context): a replica whose renewals stall stops writing before
// another can take over at lease_duration, even while its slow renewal is
// still waiting for an answer.
inline bool WithinRenewDeadline(std::chrono::steady_clock::time_point now,
                                std::chrono::steady_clock::time_point renewal_began,
                                std::chrono::milliseconds renew_deadline) {
  return now - renewal_began < renew_deadline;
}

class LeaderElectionState {
 public:
  using Steady = std::chrono::steady_clock;
  using Wall = std::chrono::system_clock;

  explicit LeaderElectionState(LeaderElectionConfig config);

  // One round: `observed` is the Lease record just read (nullopt: no Lease
  // exists). Updates the observation time and, when we hold the lease but
  // someone else now does, leadership.
  ElectionStep Step(const std::optional<LeaseRecord>& observed, Steady::time_point now,
                    Wall::time_point wall_now);
  // The outcome of the write Step() asked for.
  void OnWriteResult(bool ok, const LeaseRecord& written, Steady::time_point now);
  // A round that could not read the Lease at all.
  void OnReadFailure(Steady::time_point now);

  // The record that releases the lease (only meaningful while leader).
  LeaseRecord ReleaseRecord(Wall::time_point wall_now) const;
  void OnReleased();

  bool is_leader() const { return leader_; }
  const std::string& observed_holder() const { return observed_.holder; }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  void CheckRenewDeadline(Steady::time_point now);

  LeaderElectionConfig config_;
  LeaseRecord observed_;
  bool have_observed_ = false;
  Steady::time_point observed_at_{};
  bool leader_ = false;
  Steady::time_point last_renew_{};
};

}  // namespace wasd::planner

#endif  // WASD_PLANNER_LEADER_ELECTION_H_
