#include "migrate/saved.h"

#include "objects/json_util.h"
#include "objects/object_util.h"

namespace wasd::migrate {

using nlohmann::json;

std::string SavedHeader(const Plan& plan, std::string_view path) {
  const std::string ref = "deployment " + plan.ns + "/" + plan.name;
  const json state = {{"plan", std::string(PlanKindName(plan.kind))},
                      {"namespace", plan.ns},
                      {"name", plan.name},
                      {"uid", plan.uid},
                      {"newName", plan.new_name}};
  std::string out = "# Saved by wasd migrate --apply before it changed anything: the Deployment\n";
  out += "# that hands " + ref + " (uid " + plan.uid + ") over to the in-tree\n";
  out += "# controller. If the migration stops half way, finish it with\n";
  out += "#   kubectl wasd migrate --resume " + std::string(path) + "\n";
  out += "# or create it yourself: kubectl create -f " + std::string(path) + "\n";
  out += std::string(kSavedStatePrefix) + state.dump() + "\n";
  return out;
}

base::Result<SavedState> ReadSavedState(std::string_view text) {
  std::size_t at = 0;
  // One line at a time; a state line is near the top, but any line may be it.
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, kSavedStatePrefix.size()) != kSavedStatePrefix) continue;
    const json state = json::parse(line.substr(kSavedStatePrefix.size()), nullptr, false);
    if (!state.is_object()) {
      return base::Status::Error("its state line is not a JSON object");
    }
    SavedState s;
    for (const auto& [key, target] : std::initializer_list<std::pair<const char*, std::string*>>{
             {"namespace", &s.ns}, {"name", &s.name}, {"uid", &s.uid}, {"newName", &s.new_name}}) {
      const std::string* value = objects::AsString(objects::Member(state, key));
      if (value == nullptr || value->empty()) {
        return base::Status::Error("its state line has no \"" + std::string(key) + "\"");
      }
      *target = *value;
    }
    const std::string* kind = objects::AsString(objects::Member(state, "plan"));
    const std::optional<PlanKind> parsed =
        kind != nullptr ? ParsePlanKind(*kind) : std::optional<PlanKind>();
    if (!parsed)
      return base::Status::Error("its state line names no plan (in-place, side-by-side)");
    s.kind = *parsed;
    return s;
  }
  return base::Status::Error("it has no line starting \"" + std::string(kSavedStatePrefix) +
                             "\": it was not saved by wasd migrate --apply");
}

ResumeFrom DecideResume(const SavedState& state, const json* current) {
  if (current == nullptr) return ResumeFrom::kCreate;
  if (objects::UidOf(*current) == state.uid) {
    return objects::IsTerminating(*current) ? ResumeFrom::kWaitGone : ResumeFrom::kDelete;
  }
  const json* scheduling = objects::MemberPath(*current, {"spec", "scheduling"});
  return scheduling != nullptr && scheduling->is_object() ? ResumeFrom::kWaitInTree
                                                          : ResumeFrom::kConflict;
}

std::string DefaultSavedName(std::string_view ns, std::string_view name) {
  return "wasd-migrate-" + std::string(ns) + "-" + std::string(name) + ".yaml";
}

}  // namespace wasd::migrate
