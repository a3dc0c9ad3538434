#include "reconciler/gang_status.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <functional>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "objects/json_util.h"
#include "objects/object_util.h"
#include "reconciler/observe.h"

namespace wasd::reconciler {

using nlohmann::json;

namespace {

std::string Str(const json& object, const char* key) {
  const std::string* s = objects::AsString(objects::Member(object, key));
  return s != nullptr ? *s : std::string();
}

// Seconds from the first member created to the minCount-th bound, from the
// diagnosis timeline; nullopt when it does not tell.
std::optional<double> PendingSeconds(const doctor::Diagnosis& d) {
  std::optional<std::int64_t> first_created;
  std::vector<std::int64_t> bound;
  for (const doctor::TimelineEntry& e : d.timeline) {
    const std::optional<std::int64_t> t = base::ParseRfc3339Seconds(e.time);
    if (!t) continue;
    if (e.what == "created" && (!first_created || *t < *first_created)) first_created = t;
    if (e.what.rfind("bound", 0) == 0) bound.push_back(*t);
  }
  if (!first_created || bound.empty()) return std::nullopt;
  std::sort(bound.begin(), bound.end());
  const std::size_t quorum = static_cast<std::size_t>(
      std::clamp<std::int64_t>(d.counts.min_count, 1, static_cast<std::int64_t>(bound.size())));
  return static_cast<double>(std::max<std::int64_t>(0, bound[quorum - 1] - *first_created));
}

// Render's size estimate: one wasd_gang_members sample without its
// "namespace/name" (the name, the three label names, the longest state, a
// short value), and the rest of the wasd_gang_* families (help lines, one
// sample per reason, the histogram).
constexpr std::size_t kSampleBytes = 72;
constexpr std::size_t kOtherGangBytes = 4096;

// `reason` as the vocabulary's own string (static storage, so Published can
// keep a view); every reason Diagnose gives is in it.
std::string_view KnownReason(std::string_view reason) {
  for (const std::string_view r : doctor::kAllReasons) {
    if (r == reason) return r;
  }
  return "Unknown";
}

}  // namespace

bool AnnouncedByReconciler(std::string_view reason) {
  return reason == doctor::kForeignObject || reason == doctor::kPodGroupTerminating ||
         reason == doctor::kInvalidSchedulingConfiguration || reason == doctor::kAPINotAvailable;
}

GangCondition ConditionFor(const doctor::Diagnosis& d) {
  GangCondition c;
  c.status = d.scheduled ? "True" : "False";
  c.reason = d.reason;
  c.message = d.message;  // the counts; Unschedulable: the scheduler's words and the fit
  return c;
}

const json* FindGangCondition(const json& deployment) {
  const json* conds = objects::MemberPath(deployment, {"status", "conditions"});
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const json& c : *conds) {
    if (c.is_object() && Str(c, "type") == kGangScheduledType) return &c;
  }
  return nullptr;
}

std::optional<json> ConditionPatch(const json& deployment, const GangCondition& c,
                                   std::string_view now) {
  const json* status = objects::Member(deployment, "status");
  const json* conds = status != nullptr ? objects::Member(*status, "conditions") : nullptr;
  std::optional<std::size_t> at;
  if (conds != nullptr && conds->is_array()) {
    for (std::size_t i = 0; i < conds->size(); ++i) {
      const json& e = (*conds)[i];
      if (e.is_object() && Str(e, "type") == kGangScheduledType) {
        at = i;
        break;
      }
    }
  }
  json entry = {{"type", kGangScheduledType}, {"status", c.status},    {"reason", c.reason},
                {"message", c.message},       {"lastUpdateTime", now}, {"lastTransitionTime", now}};
  if (at) {
    const json& old = (*conds)[*at];
    if (Str(old, "status") == c.status && Str(old, "reason") == c.reason &&
        Str(old, "message") == c.message) {
      return std::nullopt;
    }
    const std::string since = Str(old, "lastTransitionTime");
    if (Str(old, "status") == c.status && !since.empty()) entry["lastTransitionTime"] = since;
    const std::string path = "/status/conditions/" + std::to_string(*at);
    return json::array({{{"op", "test"}, {"path", path + "/type"}, {"value", kGangScheduledType}},
                        {{"op", "replace"}, {"path", path}, {"value", entry}}});
  }
  // No entry in the cached object: append one, or create the array. Both
  // are guarded by the resourceVersion. An append based on a cache that has
  // not seen our own earlier append yet would add a second GangScheduled
  // entry, and conditions written meanwhile must not be replaced.
  json patch =
      json::array({{{"op", "test"},
                    {"path", "/metadata/resourceVersion"},
                    {"value", Str(*objects::Member(deployment, "metadata"), "resourceVersion")}}});
  if (conds != nullptr && conds->is_array()) {
    patch.push_back({{"op", "add"}, {"path", "/status/conditions/-"}, {"value", entry}});
  } else if (status != nullptr && status->is_object()) {
    patch.push_back(
        {{"op", "add"}, {"path", "/status/conditions"}, {"value", json::array({entry})}});
  } else {
    patch.push_back(
        {{"op", "add"}, {"path", "/status"}, {"value", {{"conditions", json::array({entry})}}}});
  }
  return patch;
}

std::string BoundBeforeGroupMessage(const doctor::Diagnosis& d) {
  const std::string group =
      d.group_name.empty() ? std::string("its group") : "group " + d.group_name;
  return std::to_string(d.counts.bound_before_group) + " member(s) of ReplicaSet " + d.replicaset +
         " were bound while " + group +
         " did not exist: the scheduler did not hold them (backend " + d.backend +
         "), so the gang was not scheduled as one. Set --pod-hold=" + d.backend +
         "=gate on wasd webhook (chart webhook.podHold." + d.backend +
         ": gate) so that wasd's gate holds new pods until their group exists";
}

bool GangEventLimiter::Admit(const std::string& uid, Clock::time_point now) {
  const std::uint64_t digest = std::hash<std::string>{}(uid);
  auto it = buckets_.find(digest);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxRememberedEvents) {
      auto oldest = buckets_.begin();
      for (auto i = buckets_.begin(); i != buckets_.end(); ++i) {
        if (i->second.at < oldest->second.at) oldest = i;
      }
      buckets_.erase(oldest);
    }
    it = buckets_.emplace(digest, Bucket{kGangEventBurst, now}).first;
  }
  Bucket& b = it->second;
  const double refilled =
      std::chrono::duration<double>(now - b.at) / std::chrono::duration<double>(kGangEventRefill);
  b.tokens = std::min<double>(kGangEventBurst, b.tokens + std::max(0.0, refilled));
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

std::chrono::milliseconds SettleWait(const GangCondition& c,
                                     std::chrono::steady_clock::time_point stale_since,
                                     std::chrono::steady_clock::time_point now,
                                     std::chrono::milliseconds settle) {
  if (c.status == "True" || settle <= std::chrono::milliseconds(0)) return {};
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(stale_since + settle - now);
  return std::max(left, std::chrono::milliseconds(0));
}

std::uint64_t InputsFingerprint(const planner::PlanInput& observed, bool api_served) {
  std::uint64_t h = api_served ? 1 : 2;
  const auto mix = [&h](const objects::Object& o) {
    if (o == nullptr) return;
    for (const char* key : {"uid", "resourceVersion"}) {
      const std::string* v = objects::AsString(objects::MemberPath(*o, {"metadata", key}));
      const std::size_t x = std::hash<std::string_view>{}(v != nullptr ? *v : std::string_view());
      // boost::hash_combine's mixing step.
      h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
  };
  mix(observed.deployment);
  for (const auto* list :
       {&observed.replicasets, &observed.pods, &observed.podgroups, &observed.workloads}) {
    // The count too: an object gone and another's version moved never cancel out.
    h ^= list->size() + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    for (const objects::Object& o : *list) mix(o);
  }
  return h == 0 ? 1 : h;
}

std::optional<doctor::Diagnosis> GangStatus::DiagnoseWithFit(doctor::GangView& in,
                                                             const FitInputsFn& fit,
                                                             const std::string& key,
                                                             Clock::time_point now) {
  doctor::Diagnosis d = doctor::Diagnose(in);
  // The fit preview only once the scheduler (or the backend) has said the
  // gang, or its new members, cannot be placed: it reads every Node and bound
  // pod, so a gang that is placed or still on its way never pays for it.
  if (d.reason != doctor::kUnschedulable && d.reason != doctor::kScaleUpPending) return d;
  std::vector<objects::Object> nodes;
  std::vector<objects::Object> bound_pods;
  if (!fit || !fit(&nodes, &bound_pods)) {
    // The informers started just now (or are still listing): wait for them,
    // up to kFitSyncWait, so the first condition and Event carry the preview.
    std::lock_guard lock(mu_);
    Published& g = gangs_[key];
    if (!g.fit_wait_since) g.fit_wait_since = now;
    if (now - *g.fit_wait_since < kFitSyncWait) return std::nullopt;
    return d;
  }
  {
    std::lock_guard lock(mu_);
    gangs_[key].fit_wait_since.reset();
  }
  if (nodes.empty()) return d;
  for (const objects::Object& n : nodes) in.nodes.push_back(n.get());
  for (const objects::Object& p : bound_pods) in.bound_pods.push_back(p.get());
  return doctor::Diagnose(in);
}

GangUpdate GangStatus::Update(const planner::PlanInput& plan, const std::string& ns,
                              const std::string& name, bool api_served, const FitInputsFn& fit) {
  GangUpdate out;
  if (plan.deployment == nullptr) {
    Forget(ns, name);
    return out;
  }
  const json& deployment = *plan.deployment;
  if (objects::IsTerminating(deployment)) return out;
  const std::string key = ns + "/" + name;
  const Clock::time_point now = now_();
  const std::uint64_t fingerprint = InputsFingerprint(plan, api_served);
  {
    std::lock_guard lock(mu_);
    const auto it = gangs_.find(key);
    if (it != gangs_.end() && it->second.settled_inputs == fingerprint) return out;
  }
  // The cached objects themselves (`plan` keeps them alive): no copies.
  doctor::GangView in = GangViewOf(plan, api_served, &facts_);
  // A gang settling towards a condition other than Scheduled is looked at
  // again when its settle time ends; until then only a look that could find
  // it Scheduled (written at once) is worth a diagnosis. (Its wasd_gang_members
  // counts move at that look.)
  if (const std::optional<std::chrono::milliseconds> left = SettleLeft(key, now);
      left && !doctor::MayBeScheduled(in)) {
    out.recheck = *left;
    return out;
  }
  const std::optional<doctor::Diagnosis> diagnosed = DiagnoseWithFit(in, fit, key, now);
  if (!diagnosed) {
    out.recheck = kGangRecheck;
    return out;
  }
  const doctor::Diagnosis& d = *diagnosed;
  ReportBoundBeforeGroup(d, deployment, key);
  Verdict v{ConditionFor(d), d.counts, d.next_step, std::nullopt};
  if (d.scheduled) v.pending_seconds = PendingSeconds(d);
  // The fit preview's reasons read Nodes, which the fingerprint does not
  // cover: never kept.
  const bool fit_reason = d.reason == doctor::kUnschedulable || d.reason == doctor::kScaleUpPending;
  return Publish(v, deployment, key, now, fit_reason ? 0 : fingerprint);
}

std::optional<std::chrono::milliseconds> GangStatus::SettleLeft(const std::string& key,
                                                                Clock::time_point now) const {
  if (settle_ <= std::chrono::milliseconds(0)) return std::nullopt;
  std::lock_guard lock(mu_);
  const auto it = gangs_.find(key);
  if (it == gangs_.end() || !it->second.stale_since) return std::nullopt;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*it->second.stale_since + settle_ - now);
  if (left <= std::chrono::milliseconds(0)) return std::nullopt;
  return left;
}

void GangStatus::ReportBoundBeforeGroup(const doctor::Diagnosis& d, const json& deployment,
                                        const std::string& key) {
  const std::int64_t now_count = d.counts.bound_before_group;
  std::int64_t before = 0;
  {
    std::lock_guard lock(mu_);
    const auto it = gangs_.find(key);
    if (it != gangs_.end()) before = it->second.counts.bound_before_group;
  }
  // Only when it grows: once per member the scheduler let through, not once
  // per look (Publish keeps the count).
  if (now_count <= before || d.backend.empty()) return;
  if (events_.Record(deployment, "Warning", kBoundBeforeGroupReason, BoundBeforeGroupMessage(d))) {
    std::lock_guard lock(mu_);
    ++events_posted_;
  }
}

GangUpdate GangStatus::Publish(const Verdict& v, const json& deployment, const std::string& key,
                               Clock::time_point now, std::uint64_t fingerprint) {
  GangUpdate out;
  const GangCondition& c = v.condition;
  const bool scheduled = c.status == "True";
  const json* old = FindGangCondition(deployment);
  const std::string old_reason = old != nullptr ? Str(*old, "reason") : "";
  const std::string old_status = old != nullptr ? Str(*old, "status") : "";
  const std::optional<json> patch =
      ConditionPatch(deployment, c, base::FormatRfc3339(std::chrono::system_clock::now()));
  {
    std::lock_guard lock(mu_);
    Published& g = gangs_[key];
    g.reason = KnownReason(c.reason);
    g.counts = v.counts;
    // Up to date: the same inputs again skip the diagnosis.
    g.settled_inputs = patch ? 0 : fingerprint;
    if (!patch) {
      g.stale_since.reset();
      return out;
    }
    if (!g.stale_since) g.stale_since = now;
    const std::chrono::milliseconds wait = SettleWait(c, *g.stale_since, now, settle_);
    if (wait > std::chrono::milliseconds(0)) {
      out.recheck = wait;
      return out;
    }
  }
  const std::size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  base::Result<json> r = api_.JsonPatch(kube::Deployments().Sub("status"), ns, name, *patch);
  if (!r.ok()) {
    // A failed `test`: the cache is behind. The Deployment's watch event
    // does not bring another reconcile when only its status moved
    // (Caches), so look again shortly.
    if (r.status().http_code() == 422 || r.status().conflict() || r.status().not_found()) {
      log_.Debug("GangScheduled condition not written: the cached Deployment is stale",
                 {{"deployment", key}, {"error", r.status().ToString()}});
      if (!r.status().not_found()) out.recheck = kGangRecheck;
      return out;
    }
    out.status = r.status();
    return out;
  }
  // An Event on a reason change, unless the reconciler's own Warning tells it.
  const bool owed = c.reason != old_reason && !AnnouncedByReconciler(c.reason);
  bool post = false;
  out.wrote = true;
  {
    std::lock_guard lock(mu_);
    ++patches_;
    gangs_[key].stale_since.reset();
    if (owed) post = limiter_.Admit(objects::UidOf(deployment), GangEventLimiter::Clock::now());
  }
  // The first True: also a gang placed within the settle time, which never
  // had a False condition written.
  if (old_status != "True" && scheduled && v.pending_seconds) pending_.Observe(*v.pending_seconds);
  // One line for the condition and its Event (the recorder logs a failed
  // post itself).
  std::string_view event = "none";  // the reason did not change, or the reconciler's own
  if (post) {
    std::string message = c.message;
    if (!v.next_step.empty() && !scheduled) message += ". " + v.next_step;
    event = "not posted";
    if (events_.Record(deployment, scheduled ? "Normal" : "Warning", c.reason, message, false)) {
      event = "posted";
      std::lock_guard lock(mu_);
      ++events_posted_;
    }
  } else if (owed) {
    event = "rate-limited";
  }
  log_.Info("GangScheduled condition written", {{"deployment", key},
                                                {"status", c.status},
                                                {"reason", c.reason},
                                                {"message", c.message},
                                                {"event", event}});
  return out;
}

void GangStatus::Forget(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  gangs_.erase(ns + "/" + name);
}

std::uint64_t GangStatus::patches() const {
  std::lock_guard lock(mu_);
  return patches_;
}

std::uint64_t GangStatus::events() const {
  std::lock_guard lock(mu_);
  return events_posted_;
}

void GangStatus::Render(std::string* out, std::int64_t not_admitted) const {
  // Formatted under the lock rather than from a copy of every gang's entry:
  // a scrape of thousands of gangs holds no second map (peak memory), and
  // an Update waits for the formatting at most.
  std::lock_guard lock(mu_);
  const std::map<std::string, Published>& gangs = gangs_;
  metrics::AppendHeader(out, "wasd_gang_members", "gauge",
                        "Members of each opted-in Deployment's current ReplicaSet by state "
                        "(created, gated by wasd, gated by others, bound, running, failed, "
                        "bound while their group did not exist); by default only the gangs "
                        "not Scheduled or with members bound before their group "
                        "(--gang-member-metrics).");
  // One allocation for the series (~0.5 MB at 1,000 gangs) rather than the
  // doublings that reach it: each doubling held the old and the new buffer,
  // and the freed ones stayed in the scraping thread's arena.
  // Which gangs get series (--gang-member-metrics): not diagnosed yet
  // (waiting for the fit preview) never; by default those not Scheduled or
  // with members bound before their group, at most member_max_gangs_.
  const auto wanted = [this](const Published& g) {
    if (g.reason.empty() || member_series_ == GangMemberSeries::kNone) return false;
    if (member_series_ == GangMemberSeries::kAll) return true;
    return g.reason != doctor::kScheduled || g.counts.bound_before_group > 0;
  };
  std::size_t bytes = 0;
  std::size_t shown = 0;
  std::int64_t omitted = 0;
  for (const auto& [key, g] : gangs) {
    if (!wanted(g)) continue;
    if (member_max_gangs_ != 0 && shown == member_max_gangs_) {
      ++omitted;
      continue;
    }
    ++shown;
    bytes += std::size(kGangMemberStates) * (key.size() + kSampleBytes);
  }
  out->reserve(out->size() + bytes + kOtherGangBytes);
  std::size_t left = shown;
  for (const auto& [key, g] : gangs) {
    if (left == 0) break;
    if (!wanted(g)) continue;
    --left;
    const std::size_t slash = key.find('/');
    std::string labels = "namespace=\"";
    metrics::AppendLabelValue(&labels, key.substr(0, slash));
    labels += "\",deployment=\"";
    metrics::AppendLabelValue(&labels, key.substr(slash + 1));
    labels += "\",state=\"";
    const std::int64_t values[] = {
        g.counts.created, g.counts.gated_wasd, g.counts.gated_other,       g.counts.bound,
        g.counts.running, g.counts.failed,     g.counts.bound_before_group};
    static_assert(std::size(values) == std::size(kGangMemberStates));
    for (std::size_t i = 0; i < std::size(kGangMemberStates); ++i) {
      metrics::AppendSample(out, "wasd_gang_members",
                            labels + std::string(kGangMemberStates[i]) + "\"",
                            static_cast<double>(values[i]));
    }
  }
  metrics::AppendHeader(out, "wasd_gang_members_omitted_gangs", "gauge",
                        "Gangs --gang-member-metrics selects whose wasd_gang_members series were "
                        "left out by --gang-member-metrics-max-gangs.");
  metrics::AppendSample(out, "wasd_gang_members_omitted_gangs", "", static_cast<double>(omitted));
  metrics::AppendHeader(out, "wasd_gangs", "gauge",
                        "Opted-in Deployments by the gang doctor's reason (one series per "
                        "reason, always present).");
  std::array<std::int64_t, std::size(doctor::kAllReasons)> by_reason{};
  for (const auto& [key, g] : gangs) {
    for (std::size_t i = 0; i < by_reason.size(); ++i) {
      if (g.reason == doctor::kAllReasons[i]) ++by_reason[i];
    }
  }
  for (std::size_t i = 0; i < by_reason.size(); ++i) {
    if (doctor::kAllReasons[i] == doctor::kNotAdmitted) by_reason[i] += not_admitted;
  }
  for (std::size_t i = 0; i < by_reason.size(); ++i) {
    metrics::AppendSample(out, "wasd_gangs",
                          "reason=\"" + std::string(doctor::kAllReasons[i]) + "\"",
                          static_cast<double>(by_reason[i]));
  }
  metrics::AppendHeader(out, "wasd_gang_pending_seconds", "histogram",
                        "Seconds from a gang's first member created to its quorum bound, "
                        "observed when its GangScheduled condition turns True.");
  pending_.Render(out, "wasd_gang_pending_seconds", "");
}

}  // namespace wasd::reconciler
