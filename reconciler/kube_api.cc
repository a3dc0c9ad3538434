#include "reconciler/kube_api.h"

#include "reconciler/projections.h"

namespace wasd::reconciler {

namespace {

kube::RequestOptions CallOptions() {
  kube::RequestOptions o;
  o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kCallTimeout);
  return o;
}

// The Workloads and group objects (PodGroups of every backend) wasd writes:
// written with fieldValidation=Strict (L1). A field the served version does
// not know (a v1 that differs from the v1beta1 shape wasd builds, a CRD of
// another release) is then a refused write with the server's reason, not a
// silently incomplete object.
bool IsGroupObject(const kube::Resource& r) {
  return r.subresource.empty() && (r.plural == "workloads" || r.plural == "podgroups");
}

}  // namespace

template <typename T>
base::Result<T> KubeApi::Count(std::string_view verb, base::Result<T> result) {
  const base::Status& s = result.status();
  const int code = s.ok() ? 200 : s.http_code();
  metrics_.CountApiRequest(verb, code);
  return result;
}

base::Result<nlohmann::json> KubeApi::GetGroupVersion(std::string_view group_version) {
  return Count("get", client_.GetGroupVersion(group_version, CallOptions()));
}

base::Result<nlohmann::json> KubeApi::Get(const kube::Resource& r, std::string_view ns,
                                          std::string_view name) {
  kube::RequestOptions o = CallOptions();
  // A pod is read only to be recorded in RecentWrites (a gate lift's failed
  // `test`), which keeps its projection: the rest of the 15 KB is never built.
  if (r.plural == kube::Pods().plural) o.projection = PodProjection().get();
  return Count("get", client_.Get(r, ns, name, o));
}

base::Result<kube::ListResult> KubeApi::ListPage(const kube::Resource& r, std::string_view ns,
                                                 std::int64_t limit) {
  kube::ListOptions o;
  o.limit = limit;
  o.request = CallOptions();
  // Pods are listed only to see which PodGroup they name and whether they
  // ran (Executor, a foreign PodGroup's release): their projection is enough.
  if (r.plural == kube::Pods().plural) o.projection = PodProjection().get();
  return Count("list", client_.ListPage(r, ns, o));
}

base::Result<nlohmann::json> KubeApi::Create(const kube::Resource& r, std::string_view ns,
                                             const nlohmann::json& object) {
  return CreateEncoded(r, ns, object.dump());
}

base::Result<nlohmann::json> KubeApi::CreateEncoded(const kube::Resource& r, std::string_view ns,
                                                    const std::string& body) {
  kube::RequestOptions o = CallOptions();
  // An Event's answer is never read (EventRecorder only needs to know it was
  // stored): its body is not decoded.
  o.discard_answer = r.plural == kube::Events().plural;
  o.strict_field_validation = IsGroupObject(r);
  return Count("create", client_.CreateEncoded(r, ns, body, o));
}

base::Result<nlohmann::json> KubeApi::Update(const kube::Resource& r, std::string_view ns,
                                             std::string_view name, const nlohmann::json& object) {
  return Count("update", client_.Update(r, ns, name, object, CallOptions()));
}

base::Result<nlohmann::json> KubeApi::JsonPatch(const kube::Resource& r, std::string_view ns,
                                                std::string_view name,
                                                const nlohmann::json& patch) {
  kube::PatchOptions o;
  o.request = CallOptions();
  // A gate lift's answer is the whole pod (10–25 KB); RecentWrites keeps
  // only its projection, so only that is decoded.
  if (r.plural == kube::Pods().plural) o.request.projection = PodProjection().get();
  // The gang doctor's condition patch on deployments/status: only whether
  // it was stored matters (the watch brings the Deployment), so the answer,
  // the whole Deployment, is not decoded.
  o.request.discard_answer = r.plural == kube::Deployments().plural && r.subresource == "status";
  o.request.strict_field_validation = IsGroupObject(r);
  return Count("patch", client_.Patch(r, ns, name, kube::PatchType::kJson, patch, o));
}

base::Result<nlohmann::json> KubeApi::Delete(const kube::Resource& r, std::string_view ns,
                                             std::string_view name,
                                             std::string_view precondition_uid,
                                             std::string_view precondition_resource_version) {
  kube::DeleteOptions o;
  o.precondition_uid = std::string(precondition_uid);
  o.precondition_resource_version = std::string(precondition_resource_version);
  o.request = CallOptions();
  return Count("delete", client_.Delete(r, ns, name, o));
}

}  // namespace wasd::reconciler
