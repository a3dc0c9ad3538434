#include "admission/review.h"

#include <exception>
#include <string>
#include <vector>

#include "admission/answer.h"
#include "admission/handlers.h"
#include "admission/json_access.h"
#include "base/json_projection.h"
#include "rules/deployment_rules.h"
#include "workloadbuilder/backend_compile.h"
#include "workloadbuilder/or_null.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::admission {

namespace {

using base::PruneStatus;
using nlohmann::json;
using workloadbuilder::FieldErrorList;

constexpr std::string_view kV1 = "admission.k8s.io/v1";
constexpr std::string_view kV1beta1 = "admission.k8s.io/v1beta1";

// What Review() and FinishScale() read themselves: the envelope, the
// request's identity, and the name a pod arrives with before it has one.
// The handlers' read sets are declared beside them (handlers.h).
base::JsonPaths EnvelopeReads() {
  return {{"apiVersion"},
          {"kind"},
          {"request", "uid"},
          {"request", "kind"},
          {"request", "resource"},
          {"request", "name"},
          {"request", "namespace"},
          {"request", "operation"},
          {"request", "subResource"},
          {"request", "object", "metadata", "generateName"}};
}

// What every handler reads of an object (a Deployment, a Scale or a Pod):
// its kind, identity, owners, labels, and the annotations that carry the
// intent, choose the backend or are warned about as a likely typo (every
// other wasd.io/ key).
base::JsonPaths ObjectReads() {
  return {{"apiVersion"},
          {"kind"},
          {"metadata", "name"},
          {"metadata", "generateName"},
          {"metadata", "namespace"},
          {"metadata", "uid"},
          {"metadata", "labels"},
          {"metadata", "annotations", std::string(workloadbuilder::kSchedulingAnnotation)},
          {"metadata", "annotations", "wasd.io/*"},
          {"metadata", "ownerReferences"}};
}

// The projection webhook `w` decodes a review with: the envelope, and the
// common and its handler's reads of request.object and request.oldObject.
const base::JsonProjection& ProjectionFor(Webhook w) {
  static const auto make = [](const base::JsonPaths& handler_reads) {
    base::JsonPaths object = ObjectReads();
    base::AppendPaths(&object, handler_reads);
    base::JsonPaths paths = EnvelopeReads();
    base::AppendPaths(&paths, base::PathsUnder({"request", "object"}, object));
    base::AppendPaths(&paths, base::PathsUnder({"request", "oldObject"}, object));
    return base::JsonProjection(paths);
  };
  static const base::JsonProjection validate = make(ValidateDeploymentReads());
  static const base::JsonProjection mutate = make(MutateDeploymentReads());
  static const base::JsonProjection pod = make(MutatePodReads());
  switch (w) {
    case Webhook::kValidateDeployment: return validate;
    case Webhook::kMutateDeployment: return mutate;
    case Webhook::kMutatePod: return pod;
  }
  return validate;
}

// The body as a document: projected by `projection`, or whole. Empty with
// a reason in *error when the body is not JSON or nests too deep.
json Decode(std::string_view body, const base::JsonProjection& projection, const Options& options,
            std::string* error) {
  const auto too_deep = [&] {
    return "JSON nested deeper than " + std::to_string(options.max_json_depth) + " levels";
  };
  // Too deep is reported before not-JSON, wherever each is in the text.
  const auto nests_too_deep = [&] {
    return NestingDepth(body, options.max_json_depth) > options.max_json_depth;
  };
  json doc;
  if (options.prune_unread_fields) {
    const PruneStatus status = projection.Parse(body, options.max_json_depth, &doc);
    if (status == PruneStatus::kOk) return doc;
    *error =
        status == PruneStatus::kTooDeep || nests_too_deep() ? too_deep() : "body is not valid JSON";
    return {};
  }
  if (nests_too_deep()) {
    *error = too_deep();
    return {};
  }
  doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) *error = "body is not valid JSON";
  return doc;
}

using workloadbuilder::OrNull;

void FillSummary(const json& request, Summary& s) {
  s.uid = StringOr(Member(&request, "uid"));
  s.kind = StringOr(Path(&request, {"kind", "kind"}));
  s.namespace_ = StringOr(Member(&request, "namespace"));
  s.name = StringOr(Member(&request, "name"));
  if (s.name.empty()) {
    // Pods arrive with generateName and no name yet.
    s.name = StringOr(Path(&request, {"object", "metadata", "generateName"}));
  }
  s.operation = StringOr(Member(&request, "operation"));
  s.sub_resource = StringOr(Member(&request, "subResource"));
}

// "group/version" of a GroupVersionKind or GroupVersionResource; core has no group.
std::string GroupVersion(const json* gv) {
  const std::string_view group = StringOr(Member(gv, "group"));
  const std::string_view version = StringOr(Member(gv, "version"));
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

bool Is(const json* gv, std::string_view group, std::string_view member, std::string_view name) {
  return IsSet(gv) && StringOr(Member(gv, "group")) == group &&
         StringOr(Member(gv, "version")) == "v1" && StringOr(Member(gv, member)) == name;
}

// "" when `request` is for webhook `w`'s resource (docs/design.md Q18), else what
// it is for, e.g. "apps/v1 statefulsets (kind apps/v1 StatefulSet)".
std::string OutOfScope(Webhook w, const json& request, std::string_view sub_resource) {
  const json* resource = Member(&request, "resource");
  const json* kind = Member(&request, "kind");
  bool ours = false;
  switch (w) {
    case Webhook::kValidateDeployment:
      ours = Is(resource, "apps", "resource", "deployments") &&
             (sub_resource == "scale" ? Is(kind, "autoscaling", "kind", "Scale")
                                      : (sub_resource.empty() || sub_resource == "status") &&
                                            Is(kind, "apps", "kind", "Deployment"));
      break;
    case Webhook::kMutateDeployment:
      ours = Is(resource, "apps", "resource", "deployments") && sub_resource.empty() &&
             Is(kind, "apps", "kind", "Deployment");
      break;
    case Webhook::kMutatePod:
      ours = Is(resource, "", "resource", "pods") && sub_resource.empty() &&
             Is(kind, "", "kind", "Pod");
      break;
  }
  if (ours) return {};
  std::string what = "no resource";
  if (IsSet(resource)) {
    what = GroupVersion(resource) + " " + std::string(StringOr(Member(resource, "resource")));
  }
  if (!sub_resource.empty()) what += "/" + std::string(sub_resource);
  if (!IsSet(kind)) return what + " (no kind)";
  return what + " (kind " + GroupVersion(kind) + " " + std::string(StringOr(Member(kind, "kind"))) +
         ")";
}

}  // namespace

struct PendingScale {
  Envelope env;
  json request;  // the decoded request (object = the new Scale)
  Summary summary;
  bool denial_causes = true;
  bool write_answer_directly = true;
};

bool WebhookForPath(std::string_view target, Webhook* out) {
  const std::size_t q = target.find('?');
  if (q != std::string_view::npos) target = target.substr(0, q);
  if (target == "/validate-apps-v1-deployment") {
    *out = Webhook::kValidateDeployment;
  } else if (target == "/mutate-apps-v1-deployment") {
    *out = Webhook::kMutateDeployment;
  } else if (target == "/mutate-v1-pod") {
    *out = Webhook::kMutatePod;
  } else {
    return false;
  }
  return true;
}

std::string_view WebhookName(Webhook w) {
  switch (w) {
    case Webhook::kValidateDeployment: return "validate-deployment";
    case Webhook::kMutateDeployment: return "mutate-deployment";
    case Webhook::kMutatePod: return "mutate-pod";
  }
  return "unknown";
}

Result Review(Webhook w, std::string_view body, const Options& options) {
  try {
    if (body.empty()) return BadRequest("empty body: expected an AdmissionReview");
    std::string error;
    json doc = Decode(body, ProjectionFor(w), options, &error);
    if (!error.empty()) return BadRequest(std::move(error));
    if (!doc.is_object()) return BadRequest("body is not an AdmissionReview: not a JSON object");
    Envelope env;
    env.api_version = StringOr(Member(&doc, "apiVersion"));
    if (StringOr(Member(&doc, "kind")) != "AdmissionReview" ||
        (env.api_version != kV1 && env.api_version != kV1beta1)) {
      return BadRequest(
          "body is not an AdmissionReview: want apiVersion admission.k8s.io/v1 (or v1beta1) and "
          "kind AdmissionReview");
    }
    json* request = nullptr;
    if (auto it = doc.find("request"); it != doc.end() && it->is_object()) request = &*it;
    if (request == nullptr) return BadRequest("AdmissionReview has no request");
    env.uid = StringOr(Member(request, "uid"));
    if (env.uid.empty()) return BadRequest("AdmissionReview request has no uid");

    Summary summary;
    FillSummary(*request, summary);
    Verdict v;
    summary.out_of_scope = OutOfScope(w, *request, summary.sub_resource);
    if (!summary.out_of_scope.empty()) {
      return Encode(env, *request, v, std::move(summary), options.denial_causes,
                    options.write_answer_directly);  // allowed
    }
    switch (w) {
      case Webhook::kValidateDeployment:
        if (summary.sub_resource == "scale") {
          if (summary.operation != "UPDATE") break;  // allowed
          const json* scale = Member(request, "object");
          if (scale == nullptr || !scale->is_object()) {
            v.bad_request = "request.object must be a Scale for a scale UPDATE";
            break;
          }
          // The ratchet needs only the request: no Deployment to read.
          if (rules::ScaleReplicasUnchanged(*scale, OrNull(Member(request, "oldObject")))) {
            break;  // allowed
          }
          Result r;
          r.summary = summary;
          r.scale_namespace = summary.namespace_;
          r.scale_name = summary.name;
          if (r.scale_name.empty()) return BadRequest("scale request has no name", summary);
          r.pending = std::make_shared<const PendingScale>(
              PendingScale{std::move(env), std::move(*request), std::move(summary),
                           options.denial_causes, options.write_answer_directly});
          return r;
        }
        v = ValidateDeployment(*request, options);
        break;
      case Webhook::kMutateDeployment: v = MutateDeployment(*request, options); break;
      case Webhook::kMutatePod:
        v = MutatePod(*request, options);
        summary.hold = v.hold;
        break;
    }
    return Encode(env, *request, v, std::move(summary), options.denial_causes,
                  options.write_answer_directly);
  } catch (const std::exception& e) {
    // Defensive: handlers do not throw on any input; if one ever does, the
    // client gets a 400, never an allowing review.
    return BadRequest(std::string("cannot process AdmissionReview: ") + e.what());
  }
}

Result FinishScale(const PendingScale& pending, const nlohmann::json* deployment) {
  try {
    Verdict v;
    const json& request = pending.request;
    const json* scale = Member(&request, "object");
    if (scale == nullptr || !scale->is_object()) {
      v.bad_request = "request.object must be a Scale for a scale UPDATE";
    } else if (deployment != nullptr) {
      v.errors =
          rules::ValidateScaleUpdate(*scale, OrNull(Member(&request, "oldObject")), *deployment);
      v.allowed = v.errors.empty();
    }
    return Encode(pending.env, request, v, pending.summary, pending.denial_causes,
                  pending.write_answer_directly);
  } catch (const std::exception& e) {
    return BadRequest(std::string("cannot process scale request: ") + e.what(), pending.summary);
  }
}

Result Unavailable(const Result& pending, std::string_view reason) {
  Result r;
  r.http_status = 503;
  r.content_type = "text/plain; charset=utf-8";
  r.summary = pending.summary;
  r.summary.allowed = false;
  r.summary.code = 503;
  r.summary.error = "cannot read Deployment " + pending.scale_namespace + "/" + pending.scale_name +
                    " for the scale review: " + std::string(reason);
  r.body = r.summary.error + "\n";
  return r;
}

}  // namespace wasd::admission
