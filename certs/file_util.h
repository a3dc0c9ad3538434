// Small file helpers for certificate material: whole-file reads, atomic
// replacement (write a temporary file in the same directory, fsync, rename,
// fsync the directory) so a reader never sees a half-written file, and
// SHA-256 fingerprints. Thread-safety: safe to call concurrently on different
// paths; concurrent writers of one path end with one of the contents intact.
#ifndef WASD_CERTS_FILE_UTIL_H_
#define WASD_CERTS_FILE_UTIL_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace wasd::certs {

using base::Result;
using base::Status;

// Certificate files are a few KB; anything larger is not ours to read.
inline constexpr std::size_t kMaxCertFileBytes = 1 << 20;

// Reads the whole file. Fails if it is missing, unreadable, or larger than
// kMaxCertFileBytes.
Status ReadSmallFile(const std::string& path, std::string* out);

// True if `path` exists (any file type, including a dangling symlink).
bool PathExists(const std::string& path);

// Replaces `path` with `data` atomically and with permission bits `mode`
// (the temporary file gets `mode` before any byte is written).
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode);

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace wasd::certs

#endif  // WASD_CERTS_FILE_UTIL_H_
