// ezpz-rankenv COMMAND [ARGS...]
// Runs once per rank, under the launcher: sets RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE from the launcher's own variables, then execs COMMAND.
// WORLD_SIZE and LOCAL_WORLD_SIZE keep the launcher-wide values ezpz exported
// when the launcher does not set its own. No shell is involved.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ezpz/rank_env.hpp"

namespace {
const char* lookup(const char* name) { return std::getenv(name); }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "ezpz-rankenv: usage: ezpz-rankenv COMMAND [ARGS...]\n");
    return 2;
  }
  const char* launcher = std::getenv("EZPZ_LAUNCHER");
  for (const auto& [name, value] : ezpz::map_rank_env(launcher ? launcher : "", lookup)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  execvp(argv[1], argv + 1);
  int error = errno;
  std::fprintf(stderr, "ezpz-rankenv: %s: %s\n", argv[1], std::strerror(error));
  return error == ENOENT ? 127 : 126;
}
