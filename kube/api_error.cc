#include "kube/api_error.h"

namespace wasd::kube {

std::string Why(const base::Status& s) {
  if (s.http_code() == 403) return "no access (forbidden): " + s.message();
  if (s.http_code() == 401) return "not authenticated: " + s.message();
  return s.ToString();
}

}  // namespace wasd::kube
