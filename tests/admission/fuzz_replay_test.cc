// Replays the admission_review fuzz corpus (tests/fuzz/corpus/admission_review,
// seeds and kept reproducers) through the fuzz target's body and invariants.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/fuzz/admission_review_target.h"
#include "tests/fuzz/replay.h"

TEST_CASE("fuzz corpus admission_review replays with every invariant holding") {
  std::vector<wasd::fuzz::ReplayFailure> failures;
  const std::size_t n =
      wasd::fuzz::ReplayCorpus(wasd::fuzz::CorpusDir(WASD_TESTDATA, "admission_review"),
                               wasd::fuzz::AdmissionReviewOneInput, failures);
  for (const auto& f : failures) FAIL_CHECK(f.file << ": " << f.what);
  CHECK(n >= 10);
  CHECK(failures.empty());
}
