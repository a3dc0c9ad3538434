// TakeDeploymentTarget (see deployment_target.h).
#include "cmd/deployment_target.h"

#include <string_view>

namespace wasd::cmd {
namespace {

constexpr std::string_view kDeploymentTypes[] = {"deployment", "deployments", "deploy",
                                                 "deployment.apps", "deployments.apps"};

bool IsDeploymentType(std::string_view arg) {
  for (std::string_view type : kDeploymentTypes) {
    if (arg == type) return true;
  }
  return false;
}

// "deployment/web", "deploy/web", ... (kubectl's TYPE/NAME).
bool IsDeploymentRef(std::string_view arg, std::string* name) {
  const std::size_t slash = arg.find('/');
  if (slash == std::string_view::npos || !IsDeploymentType(arg.substr(0, slash))) return false;
  *name = std::string(arg.substr(slash + 1));
  return true;
}

}  // namespace

DeploymentTarget TakeDeploymentTarget(int argc, const char* const* argv) {
  DeploymentTarget t;
  if (argc > 0) t.rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    if (!t.given && IsDeploymentRef(argv[i], &t.name)) {
      t.given = true;
      continue;
    }
    // kubectl's other form, TYPE NAME: "deployment web".
    if (!t.given && IsDeploymentType(argv[i]) && i + 1 < argc && argv[i + 1][0] != '-') {
      t.name = argv[++i];
      t.given = true;
      continue;
    }
    t.rest.push_back(argv[i]);
  }
  return t;
}

}  // namespace wasd::cmd
