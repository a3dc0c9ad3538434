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
#include "workloadbuilder/field_error.h"

namespace wasd::admission {

struct Verdict {
  bool allowed = true;
  workloadbuilder::FieldErrorList errors;  // set when denied
  std::vector<std::string> warnings;
  JsonPatch patch;          // mutating handlers only
  std::string bad_request;  // non-empty: answer HTTP 400 with this line
};

// /validate-apps-v1-deployment for the Deployment itself (not the scale
// subresource): CREATE and UPDATE run the rules; other operations are allowed.
Verdict ValidateDeployment(const nlohmann::json& request);

// /mutate-apps-v1-deployment: marks opted-in Deployments with wasd.io/managed.
Verdict MutateDeployment(const nlohmann::json& request);

// /mutate-v1-pod: ties a pod of an opted-in ReplicaSet to its PodGroup.
Verdict MutatePod(const nlohmann::json& request, const Options& options);

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_HANDLERS_H_
