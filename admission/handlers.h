// The three webhook handlers, each a pure function from a decoded
// AdmissionReview `request` to a Verdict. review.cc decodes and encodes
// around them. Internal to admission/; thread-safe.
#ifndef WASD_ADMISSION_HANDLERS_H_
#define WASD_ADMISSION_HANDLERS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/json_patch.h"
#include "admission/options.h"
#include "base/json_projection.h"
#include "workloadbuilder/field_error.h"

namespace wasd::admission {

struct Verdict {
  bool allowed = true;
  workloadbuilder::FieldErrorList errors;  // set when denied
  std::vector<std::string> warnings;
  JsonPatch patch;          // mutating handlers only
  std::string bad_request;  // non-empty: answer HTTP 400 with this line
  // The pod path: the hold of a pod it linked (Q23), "scheduler", "gate" or
  // "none" (--pod-scheduling-gate=false); "" when it linked none.
  std::string hold;
};

// Each handler's read set: the members of request.object (and oldObject)
// that it and the rules it calls read, declared beside the handler, beyond
// the kind, identity, labels, owners and wasd.io/ annotations every handler
// reads (review.cc ObjectReads). The webhook decodes only these (review.cc
// composes them with what it reads itself); a handler or rule that starts
// reading another member adds its path to its handler's list
// (base/json_projection.h has the path syntax).
// The review tests run every case pruned and whole, so a forgotten path
// shows as a difference.
const base::JsonPaths& ValidateDeploymentReads();
const base::JsonPaths& MutateDeploymentReads();
const base::JsonPaths& MutatePodReads();

// /validate-apps-v1-deployment for the Deployment itself (not the scale
// subresource): CREATE and UPDATE run the rules; other operations are allowed.
// `options.backends`: which backends wasd.io/backend may name, and what each
// can express.
Verdict ValidateDeployment(const nlohmann::json& request, const Options& options);

// /mutate-apps-v1-deployment: marks opted-in Deployments with wasd.io/managed
// and stamps the resolved backend (wasd.io/backend, else --backend) into the
// pod template's labels at CREATE, keeping the stored backend on UPDATE
// (native only where a label is already there: absent means native), and
// for a non-native backend its scheduler into the template's schedulerName
// where that is empty or default-scheduler (CREATE, or an UPDATE that
// changes the template anyway).
Verdict MutateDeployment(const nlohmann::json& request, const Options& options);

// /mutate-v1-pod: ties a pod of an opted-in ReplicaSet to its PodGroup, by
// the link of the backend its label wasd.io/backend names.
Verdict MutatePod(const nlohmann::json& request, const Options& options);

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_HANDLERS_H_
