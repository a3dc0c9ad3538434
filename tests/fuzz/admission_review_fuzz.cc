// libFuzzer entry of the admission_review target; the body and its invariants are in
// admission_review_target.h. An exception (a broken invariant, or one thrown by the code
// under test) is printed before the process aborts, so the crash report says
// what failed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tests/fuzz/admission_review_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    return wasd::fuzz::AdmissionReviewOneInput(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    std::abort();
  }
}
