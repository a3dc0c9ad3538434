// Status: the outcome of a certs operation that can fail — ok, or one
// human-readable line saying what went wrong (no trailing newline). Cheap to
// copy; a plain value, so thread-safety is that of std::string.
#ifndef WASD_CERTS_STATUS_H_
#define WASD_CERTS_STATUS_H_

#include <string>
#include <utility>

namespace wasd::certs {

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}

  bool failed_ = false;
  std::string message_;
};

}  // namespace wasd::certs

#endif  // WASD_CERTS_STATUS_H_
