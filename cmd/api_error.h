// An API server error in words for a person at a terminal (wasd explain,
// wasd migrate).
#ifndef WASD_CMD_API_ERROR_H_
#define WASD_CMD_API_ERROR_H_

#include <string>

#include "base/status.h"

namespace wasd::cmd {

// "no access (forbidden): ..." for 403, "not authenticated: ..." for 401,
// else the status itself.
std::string Why(const base::Status& s);

}  // namespace wasd::cmd

#endif  // WASD_CMD_API_ERROR_H_
