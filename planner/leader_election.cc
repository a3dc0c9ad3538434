#include "planner/leader_election.h"

#include <cstdio>
#include <ctime>

#include "base/time.h"
#include "objects/json_util.h"

namespace wasd::planner {

using nlohmann::json;
using objects::AsInt;
using objects::AsString;
using objects::MemberPath;

namespace {

std::string SpecString(const json& lease, std::string_view key) {
  const std::string* s = AsString(MemberPath(lease, {"spec", key}));
  return s != nullptr ? *s : std::string();
}

std::int64_t Seconds(std::chrono::milliseconds d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

}  // namespace

LeaseRecord LeaseRecordFrom(const json& lease) {
  LeaseRecord r;
  r.holder = SpecString(lease, "holderIdentity");
  r.lease_duration_seconds = AsInt(MemberPath(lease, {"spec", "leaseDurationSeconds"})).value_or(0);
  r.acquire_time = SpecString(lease, "acquireTime");
  r.renew_time = SpecString(lease, "renewTime");
  r.transitions = AsInt(MemberPath(lease, {"spec", "leaseTransitions"})).value_or(0);
  return r;
}

json LeaseObject(const json& base, const LeaderElectionConfig& config, const LeaseRecord& record) {
  json lease = base.is_object() ? base : json::object();
  lease["apiVersion"] = "coordination.k8s.io/v1";
  lease["kind"] = "Lease";
  if (!lease.contains("metadata") || !lease["metadata"].is_object())
    lease["metadata"] = json::object();
  lease["metadata"]["name"] = config.lease_name;
  lease["metadata"]["namespace"] = config.lease_namespace;
  json spec = json::object();
  if (!record.holder.empty()) spec["holderIdentity"] = record.holder;
  spec["leaseDurationSeconds"] = record.lease_duration_seconds;
  if (!record.acquire_time.empty()) spec["acquireTime"] = record.acquire_time;
  if (!record.renew_time.empty()) spec["renewTime"] = record.renew_time;
  spec["leaseTransitions"] = record.transitions;
  lease["spec"] = std::move(spec);
  return lease;
}

LeaderElectionState::LeaderElectionState(LeaderElectionConfig config)
    : config_(std::move(config)) {}

void LeaderElectionState::CheckRenewDeadline(Steady::time_point now) {
  if (leader_ && now - last_renew_ > config_.renew_deadline) leader_ = false;
}

ElectionStep LeaderElectionState::Step(const std::optional<LeaseRecord>& observed,
                                       Steady::time_point now, Wall::time_point wall_now) {
  ElectionStep step;
  const std::string now_text = base::FormatRfc3339(wall_now, base::TimePrecision::kMicros);
  if (!observed) {
    have_observed_ = false;
    step.write = LeaseWrite::kCreate;
    step.record = {config_.identity, Seconds(config_.lease_duration), now_text, now_text, 0};
    return step;
  }
  if (!have_observed_ || !(*observed == observed_)) {
    observed_ = *observed;
    observed_at_ = now;
    have_observed_ = true;
  }
  const bool ours = observed_.holder == config_.identity;
  if (!ours) {
    leader_ = false;  // someone else holds it now: stop writing at once
    const bool released = observed_.holder.empty();
    const auto duration = observed_.lease_duration_seconds > 0
                              ? std::chrono::milliseconds(observed_.lease_duration_seconds * 1000)
                              : config_.lease_duration;
    if (!released && now < observed_at_ + duration) return step;  // held and fresh: wait
    step.write = LeaseWrite::kUpdate;
    step.record = {config_.identity, Seconds(config_.lease_duration), now_text, now_text,
                   observed_.transitions + 1};
    return step;
  }
  CheckRenewDeadline(now);
  step.write = LeaseWrite::kUpdate;
  step.record = observed_;
  step.record.lease_duration_seconds = Seconds(config_.lease_duration);
  step.record.renew_time = now_text;
  if (step.record.acquire_time.empty()) step.record.acquire_time = now_text;
  return step;
}

void LeaderElectionState::OnWriteResult(bool ok, const LeaseRecord& written,
                                        Steady::time_point now) {
  if (ok) {
    leader_ = true;
    last_renew_ = now;
    observed_ = written;
    observed_at_ = now;
    have_observed_ = true;
    return;
  }
  CheckRenewDeadline(now);
}

void LeaderElectionState::OnReadFailure(Steady::time_point now) { CheckRenewDeadline(now); }

LeaseRecord LeaderElectionState::ReleaseRecord(Wall::time_point wall_now) const {
  LeaseRecord r = observed_;
  r.holder.clear();
  // client-go writes 1 s so that readers that ignore an empty holder still
  // see the lease expire almost at once.
  r.lease_duration_seconds = 1;
  r.renew_time = base::FormatRfc3339(wall_now, base::TimePrecision::kMicros);
  return r;
}

void LeaderElectionState::OnReleased() {
  leader_ = false;
  observed_.holder.clear();
}

}  // namespace wasd::planner
