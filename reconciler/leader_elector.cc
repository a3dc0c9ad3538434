#include "reconciler/leader_elector.h"

#include <condition_variable>

namespace wasd::reconciler {

using planner::ElectionStep;
using planner::LeaderElectionConfig;
using planner::LeaderElectionState;
using planner::LeaseObject;
using planner::LeaseRecord;
using planner::LeaseRecordFrom;
using planner::LeaseWrite;
using planner::WithinRenewDeadline;

using nlohmann::json;

LeaderElector::LeaderElector(Api& api, const runtime::Logger& log, LeaderElectionConfig config,
                             std::function<void(bool)> on_change)
    : api_(api), log_(log), on_change_(std::move(on_change)), state_(std::move(config)) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  thread_ = std::jthread([this](const std::stop_token& stop) { Run(stop); });
}

void LeaderElector::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
    Release();
  }
}

bool LeaderElector::is_leader() const {
  if (!leading_) return false;
  const LeaderElectionState::Steady::time_point renewed{
      std::chrono::duration_cast<LeaderElectionState::Steady::duration>(
          std::chrono::nanoseconds(renewed_at_ns_.load()))};
  return WithinRenewDeadline(LeaderElectionState::Steady::now(), renewed,
                             state_.config().renew_deadline);
}

void LeaderElector::SetLeading(bool leading) {
  if (leading_.exchange(leading) == leading) return;
  log_.Info(leading ? "became the leader" : "stopped being the leader",
            {{"identity", state_.config().identity},
             {"lease", state_.config().lease_namespace + "/" + state_.config().lease_name}});
  if (on_change_) on_change_(leading);
}

void LeaderElector::Run(const std::stop_token& stop) {
  std::mutex m;
  std::condition_variable_any cv;
  while (!stop.stop_requested()) {
    Round();
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, state_.config().retry_period, [] { return false; });
  }
}

void LeaderElector::Round() {
  std::lock_guard lock(mu_);
  const LeaderElectionConfig& c = state_.config();
  const auto now = LeaderElectionState::Steady::now();
  base::Result<json> got = api_.Get(kube::Leases(), c.lease_namespace, c.lease_name);
  std::optional<LeaseRecord> observed;
  if (got.ok()) {
    lease_ = got.value();
    observed = LeaseRecordFrom(lease_);
  } else if (got.status().not_found()) {
    lease_ = nullptr;
  } else {
    log_.Warn("cannot read the Lease", {{"error", got.status().ToString()}});
    state_.OnReadFailure(now);
    SetLeading(state_.is_leader());
    return;
  }
  const ElectionStep step = state_.Step(observed, now, LeaderElectionState::Wall::now());
  if (step.write != LeaseWrite::kNone) {
    const json object = LeaseObject(lease_, c, step.record);
    base::Result<json> written =
        step.write == LeaseWrite::kCreate
            ? api_.Create(kube::Leases(), c.lease_namespace, object)
            : api_.Update(kube::Leases(), c.lease_namespace, c.lease_name, object);
    if (written.ok()) lease_ = written.value();
    if (!written.ok() && !written.status().conflict()) {
      log_.Warn("cannot write the Lease", {{"error", written.status().ToString()}});
    }
    state_.OnWriteResult(written.ok(), step.record, LeaderElectionState::Steady::now());
    if (written.ok()) {
      renewed_at_ns_ =
          std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    }
  }
  SetLeading(state_.is_leader());
}

void LeaderElector::Release() {
  std::lock_guard lock(mu_);
  if (!state_.is_leader() || !lease_.is_object()) {
    SetLeading(false);
    return;
  }
  // Stop writing first: from here on nothing else may act as the leader.
  leading_ = false;
  const LeaderElectionConfig& c = state_.config();
  const json object =
      LeaseObject(lease_, c, state_.ReleaseRecord(LeaderElectionState::Wall::now()));
  base::Result<json> written = api_.Update(kube::Leases(), c.lease_namespace, c.lease_name, object);
  state_.OnReleased();
  if (written.ok()) {
    log_.Info("released the Lease", {{"identity", c.identity}});
  } else {
    log_.Warn("cannot release the Lease", {{"error", written.status().ToString()}});
  }
  if (on_change_) on_change_(false);
}

}  // namespace wasd::reconciler
