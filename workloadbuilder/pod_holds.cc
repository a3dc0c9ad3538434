#include "workloadbuilder/pod_holds.h"

#include "objects/json_util.h"
#include "objects/object_util.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

PodHoldState HoldStateOf(const json& pod, Backend backend) {
  const std::string* phase = objects::AsString(objects::MemberPath(pod, {"status", "phase"}));
  if (objects::IsTerminating(pod) ||
      (phase != nullptr && (*phase == "Succeeded" || *phase == "Failed"))) {
    return PodHoldState::kDone;
  }
  if (!objects::NeverScheduled(pod)) return PodHoldState::kPlaced;
  if (objects::GateIndex(pod, kPodGroupGate)) return PodHoldState::kGated;
  if (!LinkedPodGroupName(pod, backend).empty()) return PodHoldState::kScheduler;
  return PodHoldState::kUnheld;
}

bool WasdPodNeverRan(const json& pod) {
  if (!objects::NeverScheduled(pod)) return false;
  if (objects::GateIndex(pod, kPodGroupGate)) return true;
  const std::string* managed =
      objects::AsString(objects::MemberPath(pod, {"metadata", "labels", kManagedLabel}));
  return managed != nullptr && *managed == "true";
}

HoldCounts CountHolds(const std::vector<const json*>& pods, Backend backend) {
  HoldCounts c;
  for (const json* pod : pods) {
    if (pod == nullptr) continue;
    switch (HoldStateOf(*pod, backend)) {
      case PodHoldState::kDone: break;
      case PodHoldState::kPlaced: ++c.placed; break;
      case PodHoldState::kGated: ++c.gated; break;
      case PodHoldState::kUnheld: ++c.unheld; break;
      case PodHoldState::kScheduler: {
        ++c.scheduler;
        const std::string* name =
            objects::AsString(objects::MemberPath(*pod, {"spec", "schedulerName"}));
        c.schedulers.insert(name != nullptr && !name->empty() ? *name
                                                              : std::string(kDefaultSchedulerName));
        break;
      }
    }
  }
  return c;
}

std::string HoldWords(const HoldCounts& c, std::string_view group) {
  std::string out;
  const auto clause = [&out](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  if (c.gated > 0) {
    clause(std::to_string(c.gated) + " pod(s) stay gated by wasd (scheduling gate " +
           std::string(kPodGroupGate) + ")");
  }
  if (c.scheduler > 0) {
    std::string names;
    for (const std::string& s : c.schedulers) names += (names.empty() ? "" : ", ") + s;
    clause(std::to_string(c.scheduler) + " pod(s) are held by " + names + " until " +
           std::string(group) + " exists");
  }
  if (c.unheld > 0) {
    clause(std::to_string(c.unheld) +
           " pod(s) carry neither a gate nor a group link: nothing holds them, so they are "
           "scheduled one by one");
  }
  return out.empty() ? "no pod waits" : out;
}

}  // namespace wasd::workloadbuilder
