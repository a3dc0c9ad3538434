// Reading Kubernetes manifests for `wasd check`: files (or "-" for standard
// input) holding one JSON document, or a YAML stream of one or more
// documents; `kind: List` (and any `*List` with `items`) expanded into its
// items. I/O: reads files. Not thread-safe across calls sharing a stream.
#ifndef WASD_CHECK_MANIFEST_READER_H_
#define WASD_CHECK_MANIFEST_READER_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wasd::check {

struct Manifest {
  std::string source;  // file name ("-" shown as "<stdin>")
  int index = 0;       // position of the document in its file, from 1
  nlohmann::json object;
};

struct ManifestReadResult {
  std::vector<Manifest> manifests;
  std::string error;  // non-empty: the input is unusable (missing file, not YAML/JSON)
  std::vector<std::string> warnings;  // read anyway: e.g. subfolders skipped without -R
};

// Manifests are read whole; 64 MiB per file is far beyond any real manifest
// and keeps a mistaken `-f /dev/zero` from exhausting memory.
// Standard input is read only up to that limit (then refused), never whole
// first. A JSON file nests at most as deep as a YAML document
// (workloadbuilder::kMaxConfigDepth) and holds at most kMaxJsonManifestValues
// values (a `kubectl get -o json` list of a thousand Deployments has a few
// hundred thousand).
inline constexpr std::size_t kMaxManifestBytes = 64u << 20;
inline constexpr std::size_t kMaxJsonManifestValues = 1'000'000;

// Reads and parses `path`: a file, "-" for standard input, or a directory,
// whose *.yaml, *.yml and *.json files are read in name order (and those of
// its subdirectories too when `recursive`, as kubectl -R does). Empty
// documents in a YAML stream are skipped. Never throws: an unreadable path
// is an error in the result.
ManifestReadResult ReadManifests(const std::string& path, bool recursive = false);

// Parses manifest text (exposed for tests).
ManifestReadResult ParseManifests(const std::string& text, const std::string& source);

}  // namespace wasd::check

#endif  // WASD_CHECK_MANIFEST_READER_H_
