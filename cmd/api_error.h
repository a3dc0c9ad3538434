// The subcommands word API server errors as kube::Why does.
#ifndef WASD_CMD_API_ERROR_H_
#define WASD_CMD_API_ERROR_H_

#include "kube/api_error.h"

namespace wasd::cmd {

using kube::Why;

}  // namespace wasd::cmd

#endif  // WASD_CMD_API_ERROR_H_
