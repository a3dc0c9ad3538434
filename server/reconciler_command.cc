// `wasd reconciler`: not built yet (issue: the companion reconciler). Until it
// is, the subcommand says so and fails, rather than pretending to run.
#include <cstdio>
#include <cstring>

#include "server/commands.h"

namespace wasd::server {

int RunReconciler(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("Usage: wasd reconciler [flags]\n\nThe companion controller is not part of this build yet.\n");
      return 0;
    }
  }
  std::fprintf(stderr, "wasd reconciler: not implemented in this build yet\n");
  return 2;
}

}  // namespace wasd::server
