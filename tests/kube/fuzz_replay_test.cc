// Replays the watch_decoder and kubeconfig fuzz corpora
// (tests/fuzz/corpus/<target>, seeds and kept reproducers) through the fuzz
// targets' bodies and invariants.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/fuzz/kubeconfig_target.h"
#include "tests/fuzz/replay.h"
#include "tests/fuzz/watch_decoder_target.h"

TEST_CASE("fuzz corpus watch_decoder replays with every invariant holding") {
  std::vector<wasd::fuzz::ReplayFailure> failures;
  const std::size_t n =
      wasd::fuzz::ReplayCorpus(wasd::fuzz::CorpusDir(WASD_TESTDATA, "watch_decoder"),
                               wasd::fuzz::WatchDecoderOneInput, failures);
  for (const auto& f : failures) FAIL_CHECK(f.file << ": " << f.what);
  CHECK(n >= 10);
  CHECK(failures.empty());
}

TEST_CASE("fuzz corpus kubeconfig replays with every invariant holding") {
  std::vector<wasd::fuzz::ReplayFailure> failures;
  const std::size_t n = wasd::fuzz::ReplayCorpus(wasd::fuzz::CorpusDir(WASD_TESTDATA, "kubeconfig"),
                                                 wasd::fuzz::KubeconfigOneInput, failures);
  for (const auto& f : failures) FAIL_CHECK(f.file << ": " << f.what);
  CHECK(n >= 10);
  CHECK(failures.empty());
}
