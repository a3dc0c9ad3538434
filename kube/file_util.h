// Small-file reading for config loading and token re-reads. Internal to kube/.
//
// Thread-safe (no shared state).
#ifndef WASD_KUBE_FILE_UTIL_H_
#define WASD_KUBE_FILE_UTIL_H_

#include <cstddef>
#include <string>

#include "base/status.h"

namespace wasd::kube {

using base::Result;
using base::Status;

// Reads a whole file of at most `max_bytes`. Fails with kInvalidArgument
// naming the file and the reason (missing, unreadable, too large).
Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes);

// True when `path` names an existing regular file (following symlinks).
bool FileExists(const std::string& path);

}  // namespace wasd::kube

#endif  // WASD_KUBE_FILE_UTIL_H_
