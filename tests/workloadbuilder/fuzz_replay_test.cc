// Replays the config_text fuzz corpus (tests/fuzz/corpus/config_text, seeds
// and kept reproducers) through the fuzz target's body and invariants.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/fuzz/config_text_target.h"
#include "tests/fuzz/replay.h"

TEST_CASE("fuzz corpus config_text replays with every invariant holding") {
  std::vector<wasd::fuzz::ReplayFailure> failures;
  const std::size_t n =
      wasd::fuzz::ReplayCorpus(wasd::fuzz::CorpusDir(WASD_TESTDATA, "config_text"),
                               wasd::fuzz::ConfigTextOneInput, failures);
  for (const auto& f : failures) FAIL_CHECK(f.file << ": " << f.what);
  CHECK(n >= 10);
  CHECK(failures.empty());
}
