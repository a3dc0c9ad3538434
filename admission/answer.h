// The answer of a review (admission/review.cc): an AdmissionReview response
// in the version received, written directly or through nlohmann (the
// reference the direct writer is tested against), or a plain-text 400.
// Pure; no I/O.
#ifndef WASD_ADMISSION_ANSWER_H_
#define WASD_ADMISSION_ANSWER_H_

#include <string>

#include <nlohmann/json.hpp>

#include "admission/handlers.h"
#include "admission/review.h"

namespace wasd::admission {

// The parts of a decoded review that every answer needs.
struct Envelope {
  std::string api_version;  // answered in the version received
  std::string uid;
};

// A plain-text HTTP 400 with `reason` (and the summary's code 400).
Result BadRequest(std::string reason, Summary summary = {});

// The answer to `request` (its Envelope `env`) for verdict `v`: 200 with the
// review, or BadRequest when v.bad_request is set. with_causes: one cause per
// field error in a denial; write_directly: the direct writer, not nlohmann.
Result Encode(const Envelope& env, const nlohmann::json& request, Verdict& v, Summary summary,
              bool with_causes, bool write_directly);

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_ANSWER_H_
