#include "runtime/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace wasd::runtime {
namespace {

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::string DirName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Closes a descriptor on every path out of WriteFileAtomic.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace

base::Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return base::Status::Error(base::Status::Kind::kInvalidArgument,
                               ErrnoText("cannot read", path));
  const FdCloser closer(fd);
  std::string data;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return base::Status::Error(base::Status::Kind::kInvalidArgument,
                                 ErrnoText("cannot read", path));
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > max_bytes) {
      return base::Status::Error(base::Status::Kind::kInvalidArgument,
                                 path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  return data;
}

bool PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool RegularFileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

base::Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode) {
  const std::size_t slash = path.rfind('/');
  const std::string prefix = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = prefix + "." + base + ".tmpXXXXXX";
  FdCloser fd(::mkstemp(tmp.data()));
  if (fd.get() < 0)
    return base::Status::Error(ErrnoText("cannot create a temporary file for", path));
  auto fail = [&](const std::string& what) {
    base::Status st = base::Status::Error(ErrnoText(what, path));
    ::unlink(tmp.c_str());
    return st;
  };
  if (::fchmod(fd.get(), mode) != 0) return fail("cannot set permissions on");
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("cannot sync");
  if (::close(fd.Release()) != 0) return fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename into");
  // Make the rename itself durable; failure to open the directory is harmless.
  const int dfd = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return base::Status::Ok();
}

}  // namespace wasd::runtime
