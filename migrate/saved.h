// The manifest `wasd migrate --apply` saves before it deletes anything, and
// the decision `--resume` takes from it (design: docs/migrate.md "If it is
// interrupted"). In place, between the delete and the create the Deployment
// exists nowhere but in this file, so the file is the hand-over's state: a
// YAML Deployment that `kubectl create -f` accepts as it is, under comment
// lines that say what it is, one of which (kSavedStatePrefix) carries the
// plan as JSON for --resume.
//
// Pure: text in, text or values out. Thread-safe.
#ifndef WASD_MIGRATE_SAVED_H_
#define WASD_MIGRATE_SAVED_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "migrate/plan.h"

namespace wasd::migrate {

// The comment line that carries the plan: "# wasd-migrate-state: {...}".
inline constexpr std::string_view kSavedStatePrefix = "# wasd-migrate-state: ";

// What --resume needs of a plan (the manifest comes from the YAML body).
struct SavedState {
  PlanKind kind = PlanKind::kInPlace;
  std::string ns;
  std::string name;      // the old Deployment
  std::string uid;       // its uid when the plan was made
  std::string new_name;  // the Deployment to create
};

// The comment header for `plan`'s saved manifest, `path` being where it is
// written (named in the resume advice); ends with a newline. The YAML of
// plan.manifest follows it.
std::string SavedHeader(const Plan& plan, std::string_view path);

// The state line of a saved file's `text`; an error saying what is wrong
// (no state line, not JSON, a member missing) otherwise.
base::Result<SavedState> ReadSavedState(std::string_view text);

// Where --resume re-enters, from the saved state and the Deployment named
// state.name now (`current`, null when there is none).
enum class ResumeFrom {
  kDelete,      // the old Deployment (same uid) is still there: the whole plan
  kWaitGone,    // it is Terminating (same uid): wait for it, then create
  kCreate,      // no Deployment of that name: create it from the file
  kWaitInTree,  // a Deployment with spec.scheduling has the name: created already
  kConflict,    // another Deployment without spec.scheduling has the name
};
ResumeFrom DecideResume(const SavedState& state, const nlohmann::json* current);

// The default file name: "wasd-migrate-NS-NAME.yaml".
std::string DefaultSavedName(std::string_view ns, std::string_view name);

}  // namespace wasd::migrate

#endif  // WASD_MIGRATE_SAVED_H_
