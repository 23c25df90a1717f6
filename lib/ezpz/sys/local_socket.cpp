#include "ezpz/sys/local_socket.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <fmt/format.h>

namespace ezpz::sys {

std::optional<std::string> random_socket_name(std::string_view kind) {
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, 0) != sizeof bits) return std::nullopt;
  return fmt::format("@ezpz-{}-{}-{:016x}", kind, ::getpid(), bits);
}

int listen_abstract(const std::string& name, int backlog) {
  auto address = abstract_address(name);
  if (!address) {
    errno = EINVAL;
    return -1;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address->first), address->second) != 0 ||
      ::listen(fd, backlog) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

}  // namespace ezpz::sys
