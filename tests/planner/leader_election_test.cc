// The Lease state machine: acquire, renew, wait, take over after expiry or
// release, lose leadership past the renew deadline.
#include "planner/leader_election.h"

#include <catch2/catch.hpp>

namespace wasd::planner {
namespace {

using namespace std::chrono_literals;
using Steady = LeaderElectionState::Steady;
using Wall = LeaderElectionState::Wall;

LeaderElectionConfig Config(const std::string& identity) {
  LeaderElectionConfig c;
  c.identity = identity;
  c.lease_namespace = "wasd-system";
  return c;
}

const Wall::time_point kWall = Wall::time_point(std::chrono::seconds(1'700'000'000));

TEST_CASE("leader election: no Lease → create it, then lead", "[unit]") {
  LeaderElectionState s(Config("me"));
  Steady::time_point t{100s};
  const ElectionStep step = s.Step(std::nullopt, t, kWall);
  CHECK(step.write == LeaseWrite::kCreate);
  CHECK(step.record.holder == "me");
  CHECK(step.record.lease_duration_seconds == 15);
  CHECK(step.record.acquire_time == "2023-11-14T22:13:20.000000Z");
  CHECK_FALSE(s.is_leader());
  s.OnWriteResult(true, step.record, t);
  CHECK(s.is_leader());
}

TEST_CASE("leader election: a fresh lease of another holder is left alone until it expires",
          "[unit]") {
  LeaderElectionState s(Config("me"));
  const LeaseRecord theirs{"other", 15, "a", "r1", 3};
  Steady::time_point t{100s};
  CHECK(s.Step(theirs, t, kWall).write == LeaseWrite::kNone);
  // Renewed by its holder: the observation clock restarts.
  const LeaseRecord renewed{"other", 15, "a", "r2", 3};
  CHECK(s.Step(renewed, t + 10s, kWall).write == LeaseWrite::kNone);
  CHECK(s.Step(renewed, t + 24s, kWall).write == LeaseWrite::kNone);
  // 15 s without a change since we saw r2: take over.
  const ElectionStep step = s.Step(renewed, t + 25s, kWall);
  CHECK(step.write == LeaseWrite::kUpdate);
  CHECK(step.record.holder == "me");
  CHECK(step.record.transitions == 4);
  CHECK(s.observed_holder() == "other");
}

TEST_CASE("leader election: a released lease is taken at once", "[unit]") {
  LeaderElectionState s(Config("me"));
  const ElectionStep step = s.Step(LeaseRecord{"", 1, "a", "r", 7}, Steady::time_point{5s}, kWall);
  CHECK(step.write == LeaseWrite::kUpdate);
  CHECK(step.record.transitions == 8);
}

TEST_CASE("leader election: the leader renews and keeps acquireTime", "[unit]") {
  LeaderElectionState s(Config("me"));
  Steady::time_point t{100s};
  ElectionStep step = s.Step(std::nullopt, t, kWall);
  s.OnWriteResult(true, step.record, t);
  step = s.Step(step.record, t + 2s, kWall + 2s);
  CHECK(step.write == LeaseWrite::kUpdate);
  CHECK(step.record.acquire_time == "2023-11-14T22:13:20.000000Z");
  CHECK(step.record.renew_time == "2023-11-14T22:13:22.000000Z");
  CHECK(step.record.transitions == 0);
  s.OnWriteResult(true, step.record, t + 2s);
  CHECK(s.is_leader());
}

TEST_CASE("leader election: failed renewals past the renew deadline end leadership", "[unit]") {
  LeaderElectionState s(Config("me"));
  Steady::time_point t{100s};
  ElectionStep step = s.Step(std::nullopt, t, kWall);
  s.OnWriteResult(true, step.record, t);
  s.OnReadFailure(t + 4s);
  s.OnWriteResult(false, step.record, t + 8s);
  CHECK(s.is_leader());
  s.OnReadFailure(t + 10s + 1ms);
  CHECK_FALSE(s.is_leader());
}

TEST_CASE("leader election: seeing another holder ends leadership at once", "[unit]") {
  LeaderElectionState s(Config("me"));
  Steady::time_point t{100s};
  ElectionStep step = s.Step(std::nullopt, t, kWall);
  s.OnWriteResult(true, step.record, t);
  CHECK(s.Step(LeaseRecord{"other", 15, "x", "y", 1}, t + 2s, kWall).write == LeaseWrite::kNone);
  CHECK_FALSE(s.is_leader());
}

TEST_CASE("leader election: release clears the holder", "[unit]") {
  LeaderElectionState s(Config("me"));
  Steady::time_point t{100s};
  ElectionStep step = s.Step(std::nullopt, t, kWall);
  s.OnWriteResult(true, step.record, t);
  const LeaseRecord r = s.ReleaseRecord(kWall + 3s);
  CHECK(r.holder.empty());
  CHECK(r.lease_duration_seconds == 1);
  s.OnReleased();
  CHECK_FALSE(s.is_leader());
  const nlohmann::json lease = LeaseObject(nullptr, s.config(), r);
  CHECK_FALSE(lease["spec"].contains("holderIdentity"));
  CHECK(lease["metadata"]["name"] == "wasd-reconciler");
  CHECK(LeaseRecordFrom(LeaseObject(nullptr, s.config(), step.record)) == step.record);
}

}  // namespace
}  // namespace wasd::planner

namespace wasd::planner {
namespace {

TEST_CASE("L5: a leader acts only within the renew deadline of its last renewal", "[unit]") {
  using std::chrono::milliseconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  const milliseconds deadline{10'000};
  CHECK(WithinRenewDeadline(t0, t0, deadline));
  CHECK(WithinRenewDeadline(t0 + milliseconds(9'999), t0, deadline));
  // A renewal round stuck for the whole deadline (two 5 s calls) ends it,
  // before another replica may take over at the 15 s lease duration.
  CHECK_FALSE(WithinRenewDeadline(t0 + deadline, t0, deadline));
  CHECK_FALSE(WithinRenewDeadline(t0 + milliseconds(14'000), t0, deadline));
}

}  // namespace
}  // namespace wasd::planner
