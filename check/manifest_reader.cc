#include "check/manifest_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "base/json_projection.h"
#include "runtime/file_util.h"
#include "workloadbuilder/config_text.h"

namespace wasd::check {

namespace {

// Hands `doc` (or each item of a *List) to `fn`; false when `fn` said stop.
bool Expand(nlohmann::json doc, const std::string& source, int index, const ManifestFn& fn) {
  if (!doc.is_object()) return true;
  auto kind = doc.find("kind");
  auto items = doc.find("items");
  if (kind != doc.end() && kind->is_string() && items != doc.end() && items->is_array()) {
    const std::string& k = kind->get_ref<const std::string&>();
    if (k.size() >= 4 && k.compare(k.size() - 4, 4, "List") == 0) {
      for (auto& item : *items) {
        Manifest m{source, index, std::move(item)};
        if (!fn(m)) return false;
      }
      return true;
    }
  }
  Manifest m{source, index, std::move(doc)};
  return fn(m);
}

bool LooksLikeJson(const std::string& text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// Walks a YAML stream document by document, split at document markers
// ("---" at the start of a line) so that each is converted with the bounded
// annotation parser; `fn(doc)` returns false to stop. One document in memory.
template <typename Fn>
void ForEachYamlDocument(std::string_view text, Fn&& fn) {
  std::string doc;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\r')) {
      if (!fn(doc)) return;
      doc.clear();
      continue;
    }
    if (line == "...") continue;
    doc.append(line);
    doc += '\n';
  }
  fn(doc);
}

bool Blank(const std::string& doc) {
  std::istringstream in(doc);
  std::string line;
  while (std::getline(in, line)) {
    const auto p = line.find_first_not_of(" \t\r");
    if (p != std::string::npos && line[p] != '#') return false;
  }
  return true;
}

}  // namespace

ManifestReadResult ParseManifests(const std::string& text, const std::string& source,
                                  const ManifestFn& fn) {
  ManifestReadResult r;
  if (LooksLikeJson(text)) {
    // The same nesting limit as a YAML document, checked while parsing (a
    // file of nothing but `[` never builds a deep value), and a bound on the
    // values a 64 MiB file can make the parser allocate.
    nlohmann::json doc;
    switch (base::ParseJsonWithin(text, static_cast<std::size_t>(workloadbuilder::kMaxConfigDepth),
                                  kMaxJsonManifestValues, &doc)) {
      case base::PruneStatus::kOk: break;
      case base::PruneStatus::kTooDeep:
        r.error = source + ": JSON nested deeper than " +
                  std::to_string(workloadbuilder::kMaxConfigDepth) + " levels";
        return r;
      case base::PruneStatus::kTooManyValues:
        r.error =
            source + ": JSON with more than " + std::to_string(kMaxJsonManifestValues) + " values";
        return r;
      case base::PruneStatus::kDuplicateKey:
        r.error = source + ": not valid JSON: an object key is repeated";
        return r;
      default: r.error = source + ": not valid JSON"; return r;
    }
    Expand(std::move(doc), source, 1, fn);
    return r;
  }
  int index = 0;
  ForEachYamlDocument(text, [&](const std::string& doc) {
    if (Blank(doc)) return true;
    ++index;
    // A manifest document is not an annotation: only the file's cap bounds
    // its size; the nesting and value limits stay.
    workloadbuilder::TextOptions options;
    options.max_bytes = kMaxManifestBytes;
    workloadbuilder::ParsedText parsed = workloadbuilder::ParseConfigText(doc, options);
    if (!parsed.ok()) {
      r.error =
          source + ": document " + std::to_string(index) + " is not YAML or JSON: " + parsed.error;
      return false;
    }
    if (!parsed.value.is_object()) {
      r.error = source + ": document " + std::to_string(index) + " is not a mapping";
      return false;
    }
    return Expand(std::move(parsed.value), source, index, fn);
  });
  return r;
}

ManifestReadResult ParseManifests(const std::string& text, const std::string& source) {
  ManifestReadResult r;
  ManifestReadResult parsed = ParseManifests(text, source, [&r](Manifest& m) {
    r.manifests.push_back(std::move(m));
    return true;
  });
  parsed.manifests = std::move(r.manifests);
  return parsed;
}

namespace {

bool IsManifestFile(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// Reads standard input up to `limit` bytes; false (with `text` holding the
// first `limit` + 1 bytes) when there is more. Never reads the rest, so an
// endless or huge stream costs at most `limit` + one chunk of memory.
bool ReadStdinWithin(std::size_t limit, std::string& text) {
  constexpr std::size_t kChunk = std::size_t{64} << 10;
  std::string chunk(kChunk, '\0');
  while (text.size() <= limit) {
    const std::size_t want = std::min(kChunk, limit + 1 - text.size());
    const std::size_t got = std::fread(chunk.data(), 1, want, stdin);
    text.append(chunk.data(), got);
    if (got < want) {
      if (std::ferror(stdin)) throw std::runtime_error(std::strerror(errno));
      break;  // end of input
    }
  }
  return text.size() <= limit;
}

ManifestReadResult ReadOneFile(const std::string& path, const ManifestFn& fn,
                               const std::string* stdin_text) {
  ManifestReadResult r;
  std::string text;
  const std::string source = path == "-" ? "<stdin>" : path;
  try {
    if (path == "-" && stdin_text != nullptr) {
      return ParseManifests(*stdin_text, source, fn);
    }
    if (path == "-") {
      if (!ReadStdinWithin(kMaxManifestBytes, text)) {
        r.error = source + ": larger than 64 MiB (the limit for one file; stopped reading there)";
        return r;
      }
    } else {
      base::Result<std::string> data = runtime::ReadSmallFile(path, kMaxManifestBytes);
      if (!data.ok()) {
        r.error = runtime::PathExists(path) ? data.status().message() : path + ": cannot open file";
        return r;
      }
      text = std::move(data).value();
    }
  } catch (const std::exception& e) {
    r.error = source + ": cannot read: " + e.what();
    return r;
  }
  if (text.size() > kMaxManifestBytes) {
    r.error = source + ": larger than 64 MiB";
    return r;
  }
  return ParseManifests(text, source, fn);
}

}  // namespace

bool ReadStdin(std::string& text, std::string& error) {
  try {
    if (ReadStdinWithin(kMaxManifestBytes, text)) return true;
    error = "<stdin>: larger than 64 MiB (the limit for one file; stopped reading there)";
  } catch (const std::exception& e) {
    error = std::string("<stdin>: cannot read: ") + e.what();
  }
  return false;
}

ManifestReadResult ReadManifests(const std::string& path, bool recursive) {
  std::vector<Manifest> all;
  ManifestReadResult r = ReadManifests(path, recursive, [&all](Manifest& m) {
    all.push_back(std::move(m));
    return true;
  });
  r.manifests = std::move(all);
  return r;
}

ManifestReadResult ReadManifests(const std::string& path, bool recursive, const ManifestFn& fn,
                                 const std::string* stdin_text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path == "-" || !fs::is_directory(path, ec)) return ReadOneFile(path, fn, stdin_text);
  ManifestReadResult r;
  std::vector<std::string> files;
  const auto options = fs::directory_options::skip_permission_denied;
  std::size_t subfolders = 0;  // counted only without -R: they are not read
  auto collect = [&](auto iterator) {
    for (auto it = iterator; it != decltype(iterator)(); it.increment(ec)) {
      if (ec) break;
      std::error_code type_ec;
      if (it->is_regular_file(type_ec) && IsManifestFile(it->path())) {
        files.push_back(it->path().string());
      } else if (!recursive && it->is_directory(type_ec)) {
        ++subfolders;
      }
    }
  };
  if (recursive) {
    collect(fs::recursive_directory_iterator(path, options, ec));
  } else {
    collect(fs::directory_iterator(path, options, ec));
  }
  if (ec) {
    r.error = path + ": cannot read the directory: " + ec.message();
    return r;
  }
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    bool stopped = false;
    ManifestReadResult one = ReadOneFile(
        file,
        [&](Manifest& m) {
          stopped = !fn(m);
          return !stopped;
        },
        nullptr);
    if (!one.error.empty()) return one;
    if (stopped) return r;
  }
  const std::string skipped =
      subfolders > 0 ? std::to_string(subfolders) + " subfolder(s) not read (use -R to read them)"
                     : "";
  if (files.empty()) {
    r.error = path + ": no *.yaml, *.yml or *.json files in the directory" +
              (skipped.empty() ? "" : "; " + skipped);
  } else if (!skipped.empty()) {
    r.warnings.push_back(path + ": " + skipped);
  }
  return r;
}

}  // namespace wasd::check
