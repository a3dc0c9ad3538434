// FUZZ_CHECK: the invariant assertion shared by the fuzz targets. A broken
// invariant throws InvariantBroken naming the condition and the source line:
// under libFuzzer the exception escapes LLVMFuzzerTestOneInput and ends the
// process (a crash, with the input saved); in the Catch2 replay tests it fails
// the test with the message and the corpus file name.
//
// Header-only; no state.
#ifndef WASD_TESTS_FUZZ_CHECK_H_
#define WASD_TESTS_FUZZ_CHECK_H_

#include <stdexcept>
#include <string>

namespace wasd::fuzz {

class InvariantBroken : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void Fail(const char* condition, const char* file, int line,
                              const std::string& detail) {
  std::string message =
      std::string(file) + ":" + std::to_string(line) + ": invariant broken: " + condition;
  if (!detail.empty()) message += " (" + detail + ")";
  throw InvariantBroken(message);
}

}  // namespace wasd::fuzz

// Checks `cond`; `detail` (a std::string expression) is only built on failure.
#define FUZZ_CHECK(cond, detail)                                        \
  do {                                                                  \
    if (!(cond)) ::wasd::fuzz::Fail(#cond, __FILE__, __LINE__, detail); \
  } while (false)

#endif  // WASD_TESTS_FUZZ_CHECK_H_
