// Small files, the one way wasd reads and writes them: whole-file reads with
// a size bound (kubeconfigs, tokens, certificates, manifests, /proc), and
// atomic replacement (write a temporary file in the same directory, fsync,
// rename, fsync the directory) so a reader never sees a half-written file.
// Thread-safety: safe to call concurrently on different paths; concurrent
// writers of one path end with one of the contents intact.
#ifndef WASD_RUNTIME_FILE_UTIL_H_
#define WASD_RUNTIME_FILE_UTIL_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace wasd::runtime {

// Reads a whole file of at most `max_bytes` (/proc files, which report size
// 0, included). Fails with kInvalidArgument naming the file and the reason
// (missing, unreadable, too large).
base::Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes);

// True if `path` exists (any file type, including a dangling symlink).
bool PathExists(const std::string& path);
// True when `path` names an existing regular file (following symlinks).
bool RegularFileExists(const std::string& path);

// Replaces `path` with `data` atomically and with permission bits `mode`
// (the temporary file gets `mode` before any byte is written).
base::Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode);

}  // namespace wasd::runtime

#endif  // WASD_RUNTIME_FILE_UTIL_H_
