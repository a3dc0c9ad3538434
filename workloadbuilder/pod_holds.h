// What keeps each pod of a gang out of scheduling, read from the pod itself
// (docs/design.md Q23): wasd's gate, the scheduler the pod is addressed to
// (it names a group and a scheduler that waits for that group), or nothing.
// Every message that says how pods wait is worded from these counts, never
// from a flag: a pod is "gated" only when it carries the gate.
//
// Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_POD_HOLDS_H_
#define WASD_WORKLOADBUILDER_POD_HOLDS_H_

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloadbuilder/backend.h"

namespace wasd::workloadbuilder {

enum class PodHoldState {
  kDone,       // finished or being deleted: waits for nothing
  kPlaced,     // bound to a node (or PodScheduled=True)
  kGated,      // carries wasd.io/pod-group
  kScheduler,  // names a group under its backend, no gate, not placed
  kUnheld,     // no gate, no group link, not placed: nothing holds it
};

// The state of one pod of `backend` (the backend decides where the link is).
PodHoldState HoldStateOf(const nlohmann::json& pod, Backend backend);

// A pod of wasd's that never ran: linked by wasd's webhook (it carries the
// gate wasd.io/pod-group, or wasd's marker label wasd.io/managed from the
// pod template) and never scheduled (objects::NeverScheduled), whatever its
// hold (docs/design.md Q14, Q23).
bool WasdPodNeverRan(const nlohmann::json& pod);

// The counts over a set of pods, and the schedulers of the held ones.
struct HoldCounts {
  std::size_t gated = 0;
  std::size_t scheduler = 0;
  std::size_t unheld = 0;
  std::size_t placed = 0;
  std::set<std::string> schedulers;  // spec.schedulerName of the kScheduler pods
  std::size_t waiting() const { return gated + scheduler + unheld; }
};

HoldCounts CountHolds(const std::vector<const nlohmann::json*>& pods, Backend backend);

// How the waiting pods wait, as a clause: "2 pod(s) stay gated by wasd
// (scheduling gate wasd.io/pod-group)", "3 pod(s) are held by
// default-scheduler until <group> exists", "1 pod(s) carry neither a gate nor
// a group link: nothing holds them, so they are scheduled one by one",
// joined with "; ". `group` names what they wait for ("PodGroup x", "their
// group"). "no pod waits" when none does.
std::string HoldWords(const HoldCounts& counts, std::string_view group);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_POD_HOLDS_H_
