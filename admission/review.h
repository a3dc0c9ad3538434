// The admission protocol: AdmissionReview bytes in, response bytes out
// (docs/api.md §d, docs/design.md "Contract details"). No I/O: the server hands in
// the request body and writes out what comes back.
//
// The one exception to "one call answers" is a deployments/scale UPDATE that
// changes the replica count, which needs the stored Deployment (the Scale
// object does not carry the scheduling config): Review() then returns a
// Result whose `pending` is set; the caller fetches the Deployment (off the
// I/O threads) and calls FinishScale(), or Unavailable() when it cannot be
// read. A Scale write that keeps the count is answered at once (the ratchet
// of rules::ScaleReplicasUnchanged). Each step stays a pure function.
//
// Thread-safe: no shared mutable state.
#ifndef WASD_ADMISSION_REVIEW_H_
#define WASD_ADMISSION_REVIEW_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/options.h"
#include "workloadbuilder/rule_id.h"

namespace wasd::admission {

// Each path answers only its resource (request.resource and request.kind);
// any other request is allowed without a patch (Summary::out_of_scope).
enum class Webhook {
  kValidateDeployment,  // /validate-apps-v1-deployment: apps/v1 deployments, and
                        // their status and scale subresources
  kMutateDeployment,    // /mutate-apps-v1-deployment: apps/v1 deployments
  kMutatePod,           // /mutate-v1-pod: core v1 pods
};

// Maps a request path (query string ignored) to its webhook; false when unknown.
bool WebhookForPath(std::string_view target, Webhook* out);
std::string_view WebhookName(Webhook w);  // "validate-deployment", … (metric label)

// What the server logs and counts for one request.
struct Summary {
  std::string uid, kind, namespace_, name, operation, sub_resource;
  bool allowed = false;
  int code = 200;  // status.code of the response (200 allowed, 422 denied), or the HTTP status
  bool patched = false;
  std::string error;  // one line, for 4xx answers
  // Set when the request is not for this path's resource (a misregistered
  // webhook, docs/design.md Q18): it was allowed without a patch and not judged.
  // Names what was sent, e.g. "apps/v1 statefulsets (kind apps/v1
  // StatefulSet)"; the server logs each distinct one once.
  std::string out_of_scope;
  // A denial: the distinct rule ids its field errors carry (rules/rule_ids.h).
  std::vector<workloadbuilder::RuleId> denied_rules;
  // The pod path: Verdict::hold, the hold the linked pod got ("" when none).
  std::string hold;
};

struct PendingScale;  // opaque: the decoded scale request awaiting its Deployment

struct Result {
  int http_status = 200;  // 200 with a review; 400 for a body that is not a review
  std::string content_type = "application/json";
  std::string body;
  Summary summary;
  // Set only for a deployments/scale request: fetch the Deployment
  // `scale_namespace`/`scale_name`, then call FinishScale.
  std::shared_ptr<const PendingScale> pending;
  std::string scale_namespace, scale_name;
};

// Answers one AdmissionReview body for webhook `w`. Never throws.
Result Review(Webhook w, std::string_view body, const Options& options);

// Completes a scale request. `deployment` is the stored Deployment, or null
// when it was not found (→ allowed). Never throws.
Result FinishScale(const PendingScale& pending, const nlohmann::json* deployment);

// The answer to a pending scale request whose Deployment could not be read
// (`reason`, e.g. a timeout): HTTP 503 with one plain-text line, `cannot
// read Deployment NS/NAME for the scale review: REASON`, and the request's
// Summary marked not allowed with code 503. The API server then applies the
// registration's failurePolicy. Like controller-runtime's Errored().
Result Unavailable(const Result& pending, std::string_view reason);

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_REVIEW_H_
