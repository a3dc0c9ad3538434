// The one positional argument of `wasd explain` and `wasd migrate`: a
// Deployment in kubectl's forms, TYPE/NAME ("deployment/web", "deploy/web",
// "deployments.apps/web") or TYPE NAME ("deployment web"), taken out of the
// arguments before the flags are parsed. Pure; thread-safe.
#ifndef WASD_CMD_DEPLOYMENT_TARGET_H_
#define WASD_CMD_DEPLOYMENT_TARGET_H_

#include <string>
#include <vector>

namespace wasd::cmd {

struct DeploymentTarget {
  bool given = false;
  std::string name;               // as written after the type ("" when given empty)
  std::vector<const char*> rest;  // argv[0] and every other argument, in order
};

DeploymentTarget TakeDeploymentTarget(int argc, const char* const* argv);

}  // namespace wasd::cmd

#endif  // WASD_CMD_DEPLOYMENT_TARGET_H_
