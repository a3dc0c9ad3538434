// Fuzz target admission_review: arbitrary bytes as the body of an admission
// request, answered by each of the three webhooks (admission::Review) and, for
// a deployments/scale UPDATE, completed with FinishScale.
//
// Invariants checked on every answer:
//  - nothing throws; the status is 200 (a review) or 400 (a one-line text);
//  - a 200 body is a JSON AdmissionReview in the request's apiVersion whose
//    response.uid equals request.uid and whose summary agrees with it
//    (allowed ⇔ code 200, denied ⇒ status.code 422 with a message);
//  - a patch is a base64 JSON Patch that applies to request.object (only
//    "add" and "remove" ops, each target present) and gives an object in which:
//      pod: spec.schedulingGroup.podGroupName names the controlling
//           ReplicaSet, the gate wasd.io/pod-group is present exactly once
//           (when the option is on and the input had it at most once), and
//           nothing outside spec.schedulingGroup/spec.schedulingGates changed;
//      Deployment: with a scheduling carrier, the wasd.io/managed label is
//           "true" on the object and, unless left as it was, on its pod
//           template; without one, the label is gone or left as it was; and
//           nothing else changed;
//  - the validating webhook never patches; a pending scale request has an
//    empty body and a name, FinishScale without a Deployment allows, and
//    Unavailable answers 503; a scale UPDATE answered at once (the ratchet)
//    is allowed;
//  - the answer text written directly equals the json document's dump()
//    (Options::write_answer_directly), with and without denial causes;
//  - the pruning decoder (base/json_projection.h) accepts the body exactly when
//    nlohmann::json::parse does.
// The Deployment given to FinishScale is the input's top-level member
// "fuzzDeployment" when it is an object (Review ignores unknown members), else
// a gang Deployment with minCount 3.
//
// Header-only so that the libFuzzer entry (admission_review_fuzz.cc) and the
// Catch2 corpus replay (tests/admission/fuzz_replay_test.cc) share one body.
// Thread-safe (no state).
#ifndef WASD_TESTS_FUZZ_ADMISSION_REVIEW_TARGET_H_
#define WASD_TESTS_FUZZ_ADMISSION_REVIEW_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "admission/review.h"
#include "base/json_projection.h"
#include "tests/admission/patch_apply.h"
#include "tests/fuzz/check.h"
#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/names.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::fuzz {

namespace admission_review_detail {

using nlohmann::json;

// The member `key` of `v`, or null when `v` is not an object or lacks it.
inline const json* Get(const json* v, std::string_view key) {
  if (v == nullptr || !v->is_object()) return nullptr;
  auto it = v->find(key);
  return it == v->end() ? nullptr : &*it;
}

inline std::string Excerpt(const std::string& s) {
  constexpr std::size_t kMax = 300;
  return s.size() > kMax ? s.substr(0, kMax) + "..." : s;
}

inline const json& DefaultScaleDeployment() {
  static const json d = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "prefill-workers", "namespace": "ml", "uid": "0b7e1f6a-0000-4000-8000-000000000001",
                 "annotations": {"wasd.io/scheduling": "{\"schedulingPolicy\": {\"gang\": {\"minCount\": 3}}}"}},
    "spec": {"replicas": 4, "strategy": {"type": "Recreate"},
             "selector": {"matchLabels": {"app": "prefill-workers"}},
             "template": {"metadata": {"labels": {"app": "prefill-workers"}},
                          "spec": {"containers": [{"name": "worker", "image": "prefill:v2"}]}}}})");
  return d;
}

inline void CheckBadRequest(const admission::Result& r) {
  FUZZ_CHECK(r.content_type.rfind("text/plain", 0) == 0, r.content_type);
  FUZZ_CHECK(r.body.size() >= 2 && r.body.back() == '\n', Excerpt(r.body));
  FUZZ_CHECK(r.body.find('\n') == r.body.size() - 1, Excerpt(r.body));
  FUZZ_CHECK(r.summary.code == 400 && !r.summary.allowed, "");
  FUZZ_CHECK(r.pending == nullptr, "");
}

// The number of entries named wasd.io/pod-group in `gates` (0 unless an array).
inline int GateCount(const json* gates) {
  if (gates == nullptr || !gates->is_array()) return 0;
  int n = 0;
  for (const json& g : *gates) {
    const json* name = Get(&g, "name");
    if (name != nullptr && *name == "wasd.io/pod-group") ++n;
  }
  return n;
}

// The PodGroup name of the controlling apps/v1 ReplicaSet among
// ownerReferences (docs/design.md Q12: its name and uid, encoded like a Workload
// name).
inline std::string ControllerPodGroup(const json& pod) {
  const json* refs = Get(Get(&pod, "metadata"), "ownerReferences");
  if (refs == nullptr || !refs->is_array()) return {};
  for (const json& ref : *refs) {
    const json* controller = Get(&ref, "controller");
    if (controller != nullptr && *controller == true) {
      const json* name = Get(&ref, "name");
      const json* uid = Get(&ref, "uid");
      if (name == nullptr || !name->is_string() || uid == nullptr || !uid->is_string()) return {};
      return wasd::workloadbuilder::PodGroupName(name->get<std::string>(), uid->get<std::string>());
    }
  }
  return {};
}

// Removes `key` from the string map `map` of `meta` (an object), and the map
// when that leaves it empty (a patch may have created it).
inline void EraseFromMap(json& meta, const char* map, std::string_view key) {
  auto it = meta.find(map);
  if (it == meta.end() || !it->is_object()) return;
  it->erase(std::string(key));
  if (it->empty()) meta.erase(it);
}

inline void CheckPodPatch(const json& before, const json& after, bool gate_option) {
  namespace wb = wasd::workloadbuilder;
  const json* labels = Get(Get(&before, "metadata"), "labels");
  const std::optional<wb::Backend> backend =
      wb::BackendOfLabels(labels != nullptr ? *labels : json());
  FUZZ_CHECK(backend.has_value(), "patched a pod whose backend label names no backend");
  const std::string group_name = wb::LinkedPodGroupName(after, *backend);
  FUZZ_CHECK(!group_name.empty(), Excerpt(after.dump()));
  FUZZ_CHECK(group_name == ControllerPodGroup(before), group_name);
  const int gates_before = GateCount(Get(Get(&before, "spec"), "schedulingGates"));
  const int gates_after = GateCount(Get(Get(&after, "spec"), "schedulingGates"));
  if (gate_option && gates_before <= 1) FUZZ_CHECK(gates_after == 1, std::to_string(gates_after));
  if (!gate_option) FUZZ_CHECK(gates_after == gates_before, std::to_string(gates_after));
  // Nothing else moved.
  // A non-native backend's scheduler may replace only default-scheduler or none.
  const json* scheduler = Get(Get(&before, "spec"), "schedulerName");
  const bool scheduler_replaceable =
      *backend != wb::Backend::kNative &&
      (scheduler == nullptr || *scheduler == "" || *scheduler == "default-scheduler");
  json a = before, b = after;
  for (json* v : {&a, &b}) {
    (*v)["spec"].erase("schedulingGroup");
    (*v)["spec"].erase("schedulingGates");
    if (scheduler_replaceable) (*v)["spec"].erase("schedulerName");
    if (*backend == wb::Backend::kNative) continue;
    json& meta = (*v)["metadata"];
    EraseFromMap(meta, "annotations", wb::kVolcanoGroupAnnotation);
    EraseFromMap(meta, "annotations", wb::kKaiGroupAnnotation);
    EraseFromMap(meta, "annotations", wb::kKaiSkipPodgrouperAnnotation);
    EraseFromMap(meta, "labels", wb::kCoschedulingGroupLabel);
  }
  FUZZ_CHECK(a == b, "pod patch changed more than the scheduling group, gates and link");
}

// `meta` with the label wasd.io/managed removed, and labels dropped when that
// leaves them empty or they are not a map (a patch may have created or
// replaced them).
inline json WithoutManagedLabel(const json* meta) {
  if (meta == nullptr || !meta->is_object()) return json::object();
  json m = *meta;
  auto labels = m.find("labels");
  if (labels == m.end()) return m;
  // The template's backend label (stamped next to the marker) goes too.
  if (labels->is_object()) {
    labels->erase("wasd.io/managed");
    labels->erase("wasd.io/backend");
  }
  // A patch replaces labels that are not a map; an empty map may be its own.
  if (!labels->is_object() || labels->empty()) m.erase(labels);
  return m;
}

// The wasd.io/managed label of the metadata under `holder`, or null.
inline const json* ManagedLabel(const json* holder) {
  return Get(Get(Get(holder, "metadata"), "labels"), "wasd.io/managed");
}

inline bool SameLabel(const json* a, const json* b) {
  return a == nullptr ? b == nullptr : b != nullptr && *a == *b;
}

inline void CheckDeploymentPatch(const json& before, const json& after) {
  const bool carrier = workloadbuilder::HasSchedulingCarrier(before);
  const json* label = ManagedLabel(&after);
  if (carrier) {
    FUZZ_CHECK(label != nullptr && *label == "true", Excerpt(after.dump()));
  } else {
    FUZZ_CHECK(label == nullptr || SameLabel(label, ManagedLabel(&before)), Excerpt(after.dump()));
  }
  const json* tmpl = Get(Get(&after, "spec"), "template");
  if (tmpl != nullptr && tmpl->is_object()) {
    const json* tlabel = ManagedLabel(tmpl);
    const bool kept = SameLabel(tlabel, ManagedLabel(Get(Get(&before, "spec"), "template")));
    if (carrier) {
      FUZZ_CHECK((tlabel != nullptr && *tlabel == "true") || kept, Excerpt(after.dump()));
    } else {
      FUZZ_CHECK(tlabel == nullptr || kept, Excerpt(after.dump()));
    }
  }
  // The template's schedulerName may be set, only where it left the choice
  // to the default, and only to a backend's scheduler (issue 30 M2).
  json a = before, b = after;
  {
    const json* was = Get(Get(Get(Get(&before, "spec"), "template"), "spec"), "schedulerName");
    const json* now = Get(Get(Get(Get(&after, "spec"), "template"), "spec"), "schedulerName");
    if (now != nullptr && !SameLabel(was, now)) {
      FUZZ_CHECK(was == nullptr || *was == "" || *was == "default-scheduler",
                 Excerpt(after.dump()));
      FUZZ_CHECK(now->is_string() && *now != "" && *now != "default-scheduler",
                 Excerpt(after.dump()));
      json& spec = b["spec"]["template"]["spec"];
      if (was == nullptr) {
        spec.erase("schedulerName");
      } else {
        spec["schedulerName"] = *was;
      }
    }
  }
  // Apart from the two labels (and the maps created to hold them), nothing moved.
  for (json* v : {&a, &b}) {
    json meta = WithoutManagedLabel(Get(v, "metadata"));
    v->erase("metadata");
    if (!meta.empty()) (*v)["metadata"] = std::move(meta);
    json* t = nullptr;
    if (auto spec = v->find("spec"); spec != v->end() && spec->is_object()) {
      if (auto it = spec->find("template"); it != spec->end() && it->is_object()) t = &*it;
    }
    if (t != nullptr) {
      json tmeta = WithoutManagedLabel(Get(t, "metadata"));
      t->erase("metadata");
      if (!tmeta.empty()) (*t)["metadata"] = std::move(tmeta);
    }
  }
  FUZZ_CHECK(a == b, "Deployment patch changed more than the managed labels");
}

// Checks a 200 answer to `review` (the decoded input) from webhook `w`.
inline void CheckReview(const admission::Result& r, const json& review, admission::Webhook w,
                        bool gate_option) {
  FUZZ_CHECK(r.pending == nullptr, "");
  FUZZ_CHECK(r.content_type == "application/json", r.content_type);
  const json doc = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!doc.is_discarded() && doc.is_object(), Excerpt(r.body));
  FUZZ_CHECK(Get(&doc, "kind") != nullptr && *Get(&doc, "kind") == "AdmissionReview", "");
  FUZZ_CHECK(
      Get(&doc, "apiVersion") != nullptr && *Get(&doc, "apiVersion") == *Get(&review, "apiVersion"),
      Excerpt(r.body));
  const json* request = Get(&review, "request");
  const json* response = Get(&doc, "response");
  FUZZ_CHECK(response != nullptr && response->is_object(), Excerpt(r.body));
  const json* uid = Get(response, "uid");
  FUZZ_CHECK(uid != nullptr && uid->is_string() && !uid->empty() && *uid == *Get(request, "uid"),
             Excerpt(r.body));
  const json* allowed = Get(response, "allowed");
  FUZZ_CHECK(allowed != nullptr && allowed->is_boolean(), Excerpt(r.body));
  FUZZ_CHECK(allowed->get<bool>() == r.summary.allowed, "");
  FUZZ_CHECK(r.summary.code == (r.summary.allowed ? 200 : 422), std::to_string(r.summary.code));
  const json* patch = Get(response, "patch");
  if (!allowed->get<bool>()) {
    const json* status = Get(response, "status");
    FUZZ_CHECK(Get(status, "code") != nullptr && *Get(status, "code") == 422, Excerpt(r.body));
    const json* message = Get(status, "message");
    FUZZ_CHECK(message != nullptr && message->is_string() && !message->empty(), Excerpt(r.body));
    FUZZ_CHECK(patch == nullptr, "a denial carries a patch");
    return;
  }
  FUZZ_CHECK((patch != nullptr) == r.summary.patched, "");
  if (patch == nullptr) return;
  FUZZ_CHECK(w != admission::Webhook::kValidateDeployment, "the validating webhook patched");
  FUZZ_CHECK(Get(response, "patchType") != nullptr && *Get(response, "patchType") == "JSONPatch",
             "");
  FUZZ_CHECK(patch->is_string(), "");
  const json ops = json::parse(testing::DecodeBase64(patch->get<std::string>()), nullptr, false);
  FUZZ_CHECK(ops.is_array() && !ops.empty(), patch->get<std::string>());
  const json* object = Get(request, "object");
  FUZZ_CHECK(object != nullptr && object->is_object(), "patched a request without an object");
  json patched;
  try {
    patched = testing::ApplyAddPatch(*object, ops);
  } catch (const std::exception& e) {
    Fail("patch applies", __FILE__, __LINE__, std::string(e.what()) + " in " + ops.dump());
  }
  FUZZ_CHECK(patched.is_object(), "");
  if (w == admission::Webhook::kMutatePod) {
    CheckPodPatch(*object, patched, gate_option);
  } else {
    CheckDeploymentPatch(*object, patched);
  }
}

inline void CheckAnswer(const admission::Result& r, std::string_view body, admission::Webhook w,
                        const admission::Options& options) {
  if (r.http_status == 400) {
    CheckBadRequest(r);
    return;
  }
  FUZZ_CHECK(r.http_status == 200, std::to_string(r.http_status));
  const json review = json::parse(body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(review.is_object(), "a 200 answer to a body that is not a JSON object");
  if (r.pending == nullptr) {
    // A pod the scheduler holds (Q23) gets no gate.
    CheckReview(r, review, w, options.pod_scheduling_gate && r.summary.hold != "scheduler");
    // Only the scale ratchet answers a scale UPDATE without the Deployment.
    if (w == admission::Webhook::kValidateDeployment && r.summary.sub_resource == "scale" &&
        r.summary.operation == "UPDATE" && r.summary.out_of_scope.empty()) {
      FUZZ_CHECK(r.summary.allowed, "a scale answered without a lookup was denied");
    }
    return;
  }
  FUZZ_CHECK(w == admission::Webhook::kValidateDeployment, "");
  FUZZ_CHECK(r.body.empty() && !r.scale_name.empty(), r.scale_name);
  const admission::Result unavailable = admission::Unavailable(r, "fuzz: no answer");
  FUZZ_CHECK(unavailable.http_status == 503 && !unavailable.summary.allowed &&
                 unavailable.summary.code == 503 && unavailable.pending == nullptr,
             unavailable.body);
  FUZZ_CHECK(unavailable.body == unavailable.summary.error + "\n", unavailable.body);
  const admission::Result missing = admission::FinishScale(*r.pending, nullptr);
  if (missing.http_status == 400) {
    CheckBadRequest(missing);
  } else {
    CheckReview(missing, review, w, true);
    FUZZ_CHECK(missing.summary.allowed, "a scale of a missing Deployment was denied");
  }
  const json* given = Get(&review, "fuzzDeployment");
  const json& deployment =
      given != nullptr && given->is_object() ? *given : DefaultScaleDeployment();
  const admission::Result found = admission::FinishScale(*r.pending, &deployment);
  if (found.http_status == 400) {
    CheckBadRequest(found);
  } else {
    FUZZ_CHECK(found.http_status == 200, std::to_string(found.http_status));
    CheckReview(found, review, w, true);
  }
}

}  // namespace admission_review_detail

inline int AdmissionReviewOneInput(const std::uint8_t* data, std::size_t size) {
  using admission::Webhook;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  {
    // A nesting limit above anything `size` bytes can nest: only the grammar differs.
    nlohmann::json pruned;
    const bool pruned_ok = base::JsonProjection(base::JsonPaths{}).Parse(body, size + 1, &pruned) ==
                           base::PruneStatus::kOk;
    FUZZ_CHECK(pruned_ok == !nlohmann::json::parse(body, nullptr, false).is_discarded(),
               admission_review_detail::Excerpt(std::string(body)));
  }
  admission::Options options;
  for (Webhook w :
       {Webhook::kValidateDeployment, Webhook::kMutateDeployment, Webhook::kMutatePod}) {
    admission_review_detail::CheckAnswer(admission::Review(w, body, options), body, w, options);
  }
  // Every backend allowed, a non-native default: the backend paths.
  admission::Options backends;
  backends.backends.backend = workloadbuilder::Backend::kKai;
  backends.backends.allowed = {workloadbuilder::kAllBackends.begin(),
                               workloadbuilder::kAllBackends.end()};
  // ... and every backend in gate mode (--pod-hold): the gate paths.
  for (workloadbuilder::Backend b : workloadbuilder::kAllBackends) {
    backends.pod_hold.Set(b, admission::PodHold::kGate);
  }
  for (Webhook w :
       {Webhook::kValidateDeployment, Webhook::kMutateDeployment, Webhook::kMutatePod}) {
    admission_review_detail::CheckAnswer(admission::Review(w, body, backends), body, w, backends);
  }
  // The non-default options: kubectl-style denials without causes, no gate.
  options.denial_causes = false;
  options.pod_scheduling_gate = false;
  for (Webhook w : {Webhook::kValidateDeployment, Webhook::kMutatePod}) {
    admission_review_detail::CheckAnswer(admission::Review(w, body, options), body, w, options);
  }
  // The answer text written directly is, byte for byte, what the json
  // document and nlohmann's dump() give (Options::write_answer_directly).
  for (bool causes : {true, false}) {
    admission::Options direct;
    direct.denial_causes = causes;
    admission::Options reference = direct;
    reference.write_answer_directly = false;
    for (Webhook w :
         {Webhook::kValidateDeployment, Webhook::kMutateDeployment, Webhook::kMutatePod}) {
      const admission::Result a = admission::Review(w, body, direct);
      const admission::Result b = admission::Review(w, body, reference);
      FUZZ_CHECK(a.http_status == b.http_status && a.body == b.body,
                 admission_review_detail::Excerpt(a.body) + " | " +
                     admission_review_detail::Excerpt(b.body));
      FUZZ_CHECK((a.pending == nullptr) == (b.pending == nullptr), "");
      if (a.pending != nullptr) {
        const auto& d = admission_review_detail::DefaultScaleDeployment();
        FUZZ_CHECK(admission::FinishScale(*a.pending, &d).body ==
                       admission::FinishScale(*b.pending, &d).body,
                   "FinishScale");
      }
    }
  }
  return 0;
}

}  // namespace wasd::fuzz

#endif  // WASD_TESTS_FUZZ_ADMISSION_REVIEW_TARGET_H_
