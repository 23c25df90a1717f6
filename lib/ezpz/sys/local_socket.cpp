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

Received receive_with_fd(int socket, char* buffer, std::size_t size) {
  iovec part{.iov_base = buffer, .iov_len = size};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  Received received{.got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC)};
  if (received.got < 0) return received;
  received.fd_lost = (message.msg_flags & MSG_CTRUNC) != 0;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      if (received.fd < 0) {
        received.fd = fd;
      } else {
        ::close(fd);
      }
    }
  }
  return received;
}

}  // namespace ezpz::sys
