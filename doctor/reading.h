// The gang doctor's readers of the objects it is given (internal to doctor/):
// the current ReplicaSet and its members, a group object's status in each
// backend's words, timestamps and the timeline. Pure; thread-safe.
#ifndef WASD_DOCTOR_READING_H_
#define WASD_DOCTOR_READING_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/diagnosis.h"
#include "workloadbuilder/backend.h"

namespace wasd::doctor::internal {

// An lvalue null for `p == nullptr ? kNullJson : *p` (no copy of *p).
extern const nlohmann::json kNullJson;

// The string at `value` (or at `path` under `root`); "" when absent or not a string.
std::string Str(const nlohmann::json* value);
std::string Str(const nlohmann::json& root, std::initializer_list<std::string_view> path);

// The Deployment's current ReplicaSet: the highest revision, then the newest.
const nlohmann::json* CurrentReplicaSet(const ObjectRefs& replicasets);

// "3/4 created, 1 gated by wasd, 2 bound, minCount 4" (gated by others and
// failed only when not zero).
std::string JoinCounts(const Counts& c);

// A group object's status in its backend's words.
struct GroupStatus {
  std::string summary;
  bool placed = false;  // the backend says the gang was placed (once)
  bool queue_blocked = false;
  std::string unschedulable;  // the backend's "cannot place" message, "" when none
  std::string queue_message;
};
GroupStatus ReadGroupStatus(const nlohmann::json& group, workloadbuilder::Backend backend);
// The gang minimum the group object states, if it does.
std::optional<std::int64_t> GroupMinCount(const nlohmann::json& group,
                                          workloadbuilder::Backend backend);
// "a, b": the object's metadata.finalizers; "" when none.
std::string Finalizers(const nlohmann::json& object);

// The first topology key of the scheduling configuration; "" when none.
std::string TopologyKey(const nlohmann::json& config);
// An Event's newest time.
std::string EventTime(const nlohmann::json& ev);
// The one topology domain the bound members run in; "" when none or several.
std::string DomainOfBound(const std::vector<const nlohmann::json*>& members,
                          const ObjectRefs& nodes, const std::string& key);

// The current ReplicaSet's members (its pods not being deleted).
struct Members {
  std::vector<const nlohmann::json*> pods;
  std::set<std::string> uids;
};
// Counts the members of `rs` into d->counts and their timeline into
// d->timeline. Done before any verdict, so that every reason, the early ones
// too, reports the members that exist.
Members CountMembers(const GangView& in, const nlohmann::json* rs, Diagnosis* d);

// The members bound to a node while their group object did not exist
// (docs/design.md Q23): the group `group` (null: missing) was created after
// the member was bound (its PodScheduled=True transition, else its
// creation; as precise as the times are written: the API server writes whole
// seconds, so a bind in the group's own second is not counted), or is missing while the member is
// bound.
std::int64_t CountBoundBeforeGroup(const std::vector<const nlohmann::json*>& members,
                                   const nlohmann::json* group);

}  // namespace wasd::doctor::internal

#endif  // WASD_DOCTOR_READING_H_
