#include "reconciler/events.h"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <functional>

#include "base/json_text.h"
#include "base/time.h"
#include "kube/backoff.h"
#include "objects/object_util.h"

namespace wasd::reconciler {

using objects::Key;
using objects::NameOf;
using objects::NamespaceOf;
using objects::ResourceVersionOf;
using objects::UidOf;

using nlohmann::json;

namespace {

std::string RandomHex() {
  char buf[24];
  const auto a = static_cast<unsigned long long>(kube::Random01() * 4294967296.0);
  const auto b = static_cast<unsigned long long>(kube::Random01() * 4294967296.0);
  std::snprintf(buf, sizeof buf, "%08llx%08llx", a, b);
  return buf;
}

}  // namespace

std::string EventJson(const json& deployment, std::string_view type, std::string_view reason,
                      std::string_view message, std::string_view instance,
                      std::string_view name_suffix, std::string_view now_rfc3339) {
  const std::string ns = NamespaceOf(deployment);
  const std::string name = NameOf(deployment);
  const std::string rv = ResourceVersionOf(deployment);
  std::string out;
  out.reserve(512 + message.size());
  // `"key":"value"` with the value escaped; `sep` comes first.
  const auto field = [&out](std::string_view sep, std::string_view key, std::string_view value) {
    out += sep;
    out += '"';
    out += key;
    out += "\":\"";
    base::AppendJsonEscaped(&out, value);
    out += '"';
  };
  out += R"({"apiVersion":"v1","kind":"Event","metadata":{)";
  field("", "name", name + "." + std::string(name_suffix));
  field(",", "namespace", ns);
  out += R"(},"involvedObject":{"apiVersion":"apps/v1","kind":"Deployment")";
  field(",", "name", name);
  field(",", "namespace", ns);
  field(",", "uid", UidOf(deployment));
  if (!rv.empty()) field(",", "resourceVersion", rv);
  out += '}';
  field(",", "type", type);
  field(",", "reason", reason);
  field(",", "message", message);
  out += R"(,"source":{)";
  field("", "component", kComponent);
  out += '}';
  field(",", "reportingComponent", kComponent);
  field(",", "reportingInstance", instance);
  field(",", "firstTimestamp", now_rfc3339);
  field(",", "lastTimestamp", now_rfc3339);
  out += R"(,"count":1})";
  return out;
}

std::string WithoutCounts(std::string_view key) {
  static constexpr std::string_view kPods = " pod(s)";
  std::string out;
  out.reserve(key.size());
  std::size_t i = 0;
  while (i < key.size()) {
    std::size_t end = i;
    while (end < key.size() && key[end] >= '0' && key[end] <= '9') ++end;
    // A count is a number of its own: not the tail of a word such as "v1beta1".
    const bool starts = i == 0 || std::isalnum(static_cast<unsigned char>(key[i - 1])) == 0;
    if (end > i && starts && key.substr(end, kPods.size()) == kPods) {
      out += '#';
      i = end;
    } else {
      out += key[i];
      ++i;
    }
  }
  return out;
}

bool RepeatFilter::Admit(std::string_view type, const std::string& key, Clock::time_point now) {
  if (type != "Warning") return true;
  const std::uint64_t digest = std::hash<std::string>{}(key);
  const auto it = recent_.find(digest);
  if (it != recent_.end() && now - it->second < kEventRepeatWindow) return false;
  if (it == recent_.end() && recent_.size() >= kMaxRememberedEvents) {
    auto oldest = recent_.begin();
    for (auto i = recent_.begin(); i != recent_.end(); ++i) {
      if (i->second < oldest->second) oldest = i;
    }
    recent_.erase(oldest);
  }
  recent_[digest] = now;
  return true;
}

bool EventRecorder::Record(const json& deployment, std::string_view type, std::string_view reason,
                           std::string_view message, bool log_posted) {
  if (type == "Normal" && !normal_events_) return false;  // --normal-events=false
  const std::string key =
      UidOf(deployment) + "\n" + std::string(reason) + "\n" + WithoutCounts(message);
  {
    std::lock_guard lock(mu_);
    if (!repeats_.Admit(type, key, RepeatFilter::Clock::now())) return false;
  }
  const auto result =
      api_.CreateEncoded(kube::Events(), NamespaceOf(deployment),
                         EventJson(deployment, type, reason, message, instance_, RandomHex(),
                                   base::FormatRfc3339(std::chrono::system_clock::now())));
  if (!result.ok()) {
    log_.Warn("event not recorded",
              {{"deployment", Key(NamespaceOf(deployment), NameOf(deployment))},
               {"reason", reason},
               {"error", result.status().ToString()}});
    return false;
  }
  if (!log_posted) return true;
  log_.Info("event", {{"deployment", Key(NamespaceOf(deployment), NameOf(deployment))},
                      {"type", type},
                      {"reason", reason},
                      {"message", message}});
  return true;
}

}  // namespace wasd::reconciler
