// The plain replay driver: runs a fuzz target's body over every file of its
// seed corpus (tests/fuzz/corpus/<target>/), in name order, without libFuzzer.
// The Catch2 tests tests/<layer>/fuzz_replay_test.cc use it so that every
// normal test run (gcc, no fuzzing) re-checks the corpus, including each kept
// reproducer of a past finding.
//
// Not thread-safe (reads files; no shared state, but meant for one caller).
#ifndef WASD_TESTS_FUZZ_REPLAY_H_
#define WASD_TESTS_FUZZ_REPLAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace wasd::fuzz {

// The corpus directory of `target` given the tests/testdata path.
inline std::filesystem::path CorpusDir(const std::string& testdata, const std::string& target) {
  return std::filesystem::path(testdata).parent_path() / "fuzz" / "corpus" / target;
}

struct ReplayFailure {
  std::string file;
  std::string what;
};

// Calls `one_input` on the bytes of every regular file under `dir`. Returns
// the number of files run; failures (an exception out of the body) are
// collected in `failures` with the file name, and replay goes on.
template <typename OneInput>
std::size_t ReplayCorpus(const std::filesystem::path& dir, OneInput one_input,
                         std::vector<ReplayFailure>& failures) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      failures.push_back({file.filename().string(), "cannot read"});
      continue;
    }
    try {
      // A non-null pointer even for an empty file, as libFuzzer passes.
      static const std::uint8_t kEmpty = 0;
      const auto* data =
          bytes.empty() ? &kEmpty : reinterpret_cast<const std::uint8_t*>(bytes.data());
      one_input(data, bytes.size());
    } catch (const std::exception& e) {
      failures.push_back({file.filename().string(), e.what()});
    }
  }
  return files.size();
}

}  // namespace wasd::fuzz

#endif  // WASD_TESTS_FUZZ_REPLAY_H_
