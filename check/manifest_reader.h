// Reading Kubernetes manifests for `wasd check`: files (or "-" for standard
// input) holding one JSON document, or a YAML stream of one or more
// documents; `kind: List` (and any `*List` with `items`) expanded into its
// items. I/O: reads files. Not thread-safe across calls sharing a stream.
#ifndef WASD_CHECK_MANIFEST_READER_H_
#define WASD_CHECK_MANIFEST_READER_H_

#include <cstddef>
#include <functional>
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

// The same, one manifest at a time: `fn` gets each as it is parsed (a YAML
// stream is split and converted document by document, so memory holds the
// file's text and one document, not every object; a JSON file is one
// document, parsed whole) and returns false to stop. The result's
// `manifests` stays empty. `stdin_text`: what "-" reads (standard input can
// be read once; the caller keeps it for a second pass), null: read it.
using ManifestFn = std::function<bool(Manifest&)>;
ManifestReadResult ReadManifests(const std::string& path, bool recursive, const ManifestFn& fn,
                                 const std::string* stdin_text = nullptr);
ManifestReadResult ParseManifests(const std::string& text, const std::string& source,
                                  const ManifestFn& fn);
// Standard input whole, up to kMaxManifestBytes; false (and `error` set) when
// it is larger or unreadable.
bool ReadStdin(std::string& text, std::string& error);

}  // namespace wasd::check

#endif  // WASD_CHECK_MANIFEST_READER_H_
