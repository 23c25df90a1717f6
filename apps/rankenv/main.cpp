// ezpz-rankenv COMMAND [ARGS...]
// Runs once per rank, under the launcher: sets RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE from the launcher's own variables, then execs COMMAND.
// WORLD_SIZE and LOCAL_WORLD_SIZE keep the launcher-wide values ezpz exported
// when the launcher does not set its own. No shell is involved.
// With EZPZ_STDIN set, rank 0 takes its stdin from ezpz's relay there and the
// other ranks from /dev/null (lib/ezpz/sys/stdin_relay.hpp says why).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ezpz/rank_env.hpp"
#include "ezpz/sys/stdin_relay.hpp"

namespace {

const char* lookup(const char* name) { return std::getenv(name); }

int connect_to(const std::string& name) {
  auto address = ezpz::sys::abstract_address(name);
  if (!address) {
    errno = EINVAL;
    return -1;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 &&
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address->first), address->second) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

void take_stdin() {
  const char* variable = std::getenv(ezpz::sys::k_stdin_socket_variable);
  if (variable == nullptr) return;
  const std::string path = variable;
  unsetenv(ezpz::sys::k_stdin_socket_variable);  // the job's own children are not rank 0's stdin
  const char* rank = std::getenv("RANK");
  int fd = -1;
  if (rank != nullptr && std::strcmp(rank, "0") == 0) {
    fd = connect_to(path);
    if (fd < 0) {
      std::fprintf(stderr,
                   "ezpz-rankenv: rank 0: cannot reach ezpz's stdin at %s: %s; stdin is empty\n",
                   path.c_str(), std::strerror(errno));
    }
  }
  if (fd < 0) fd = ::open("/dev/null", O_RDONLY);
  if (fd > STDIN_FILENO) {
    ::dup2(fd, STDIN_FILENO);
    ::close(fd);
  }
}

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
  take_stdin();
  execvp(argv[1], argv + 1);
  int error = errno;
  std::fprintf(stderr, "ezpz-rankenv: %s: %s\n", argv[1], std::strerror(error));
  return error == ENOENT ? 127 : 126;
}
