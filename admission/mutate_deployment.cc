#include "admission/handlers.h"
#include "admission/json_access.h"
#include "workloadbuilder/field_path.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::admission {

namespace {

using workloadbuilder::EscapeJsonPointerToken;
using workloadbuilder::kManagedLabel;

// Adds `wasd.io/managed: "true"` to the labels of the metadata object at
// `meta_pointer` (`meta` is its current value, may be null), creating the
// metadata or labels map when absent. No op when already so.
void MarkLabels(const nlohmann::json* meta, const std::string& meta_pointer, JsonPatch& patch) {
  const nlohmann::json* labels = Member(meta, "labels");
  const nlohmann::json* current = Member(labels, kManagedLabel);
  if (current != nullptr && current->is_string() && *current == "true") return;
  const nlohmann::json marker = {{std::string(kManagedLabel), "true"}};
  if (meta == nullptr || !meta->is_object()) {
    patch.Add(meta_pointer, {{"labels", marker}});
  } else if (labels == nullptr || !labels->is_object()) {
    patch.Add(meta_pointer + "/labels", marker);
  } else {
    patch.Add(meta_pointer + "/labels/" + EscapeJsonPointerToken(kManagedLabel), "true");
  }
}

}  // namespace

Verdict MutateDeployment(const nlohmann::json& request) {
  Verdict v;
  const std::string_view op = StringOr(Member(&request, "operation"));
  if (op != "CREATE" && op != "UPDATE") return v;
  const nlohmann::json* object = Member(&request, "object");
  if (object == nullptr || !object->is_object()) {
    v.bad_request = "request.object must be an object for " + std::string(op);
    return v;
  }
  if (!workloadbuilder::HasSchedulingCarrier(*object)) return v;
  MarkLabels(Member(object, "metadata"), "/metadata", v.patch);
  const nlohmann::json* tmpl = Path(object, {"spec", "template"});
  if (tmpl != nullptr && tmpl->is_object()) {
    MarkLabels(Member(tmpl, "metadata"), "/spec/template/metadata", v.patch);
  }
  return v;
}

}  // namespace wasd::admission
