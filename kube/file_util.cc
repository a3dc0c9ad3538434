#include "kube/file_util.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace wasd::kube {

Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(Status::Kind::kInvalidArgument,
                         "cannot read " + path + ": " + std::strerror(errno));
  }
  std::string data;
  char buf[8192];
  while (in) {
    in.read(buf, sizeof buf);
    data.append(buf, static_cast<std::size_t>(in.gcount()));
    if (data.size() > max_bytes) {
      return Status::Error(Status::Kind::kInvalidArgument,
                           path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  if (in.bad()) {
    return Status::Error(Status::Kind::kInvalidArgument, "error reading " + path);
  }
  return data;
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace wasd::kube
