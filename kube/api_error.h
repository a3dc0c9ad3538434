// An API server error in words for a person at a terminal (wasd explain,
// wasd migrate) or in a note of the gang doctor's live observation.
#ifndef WASD_KUBE_API_ERROR_H_
#define WASD_KUBE_API_ERROR_H_

#include <string>

#include "base/status.h"

namespace wasd::kube {

// "no access (forbidden): ..." for 403, "not authenticated: ..." for 401,
// else the status itself.
std::string Why(const base::Status& s);

}  // namespace wasd::kube

#endif  // WASD_KUBE_API_ERROR_H_
