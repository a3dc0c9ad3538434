// libFuzzer entry of the watch_decoder target; the body and its invariants are in
// watch_decoder_target.h. An exception (a broken invariant, or one thrown by the code
// under test) is printed before the process aborts, so the crash report says
// what failed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tests/fuzz/watch_decoder_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    return wasd::fuzz::WatchDecoderOneInput(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    std::abort();
  }
}
