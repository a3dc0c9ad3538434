// libFuzzer entry of the kubeconfig target; the body and its invariants are in
// kubeconfig_target.h. An exception (a broken invariant, or one thrown by the code
// under test) is printed before the process aborts, so the crash report says
// what failed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tests/fuzz/kubeconfig_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    return wasd::fuzz::KubeconfigOneInput(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    std::abort();
  }
}
