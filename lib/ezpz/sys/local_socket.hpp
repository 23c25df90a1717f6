#pragma once
// Abstract Unix sockets between ezpz and the ranks on its own host: the stdin relay
// (stdin_relay.hpp) and the ranks' records sent straight to ezpz (rank_records.hpp's
// k_output_socket_variable). Abstract: no file to create and remove, so nothing on the launch
// path's disk and nothing left behind. Named at random (nobody can guess a name to take it
// first) and only a process of ezpz's own user is let in (abstract names have no permissions).
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ezpz::sys {

// The address of the abstract socket "@NAME" (the @ is sun_path's leading NUL), and its length
// for bind/connect; nullopt when `name` is not of that form or too long. Inline: ezpz-rankenv
// links nothing but the rank-variable table.
inline std::optional<std::pair<sockaddr_un, socklen_t>> abstract_address(std::string_view name) {
  sockaddr_un address{};
  if (name.size() < 2 || name.front() != '@' || name.size() > sizeof(address.sun_path)) {
    return std::nullopt;
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data() + 1, name.size() - 1);  // sun_path[0] stays NUL
  return std::pair{address, static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())};
}

// "@ezpz-<kind>-<pid>-<64 random bits>"; nullopt (errno set) when the system gives no random bits.
std::optional<std::string> random_socket_name(std::string_view kind);

// A non-blocking stream socket listening at "@NAME"; -1 (errno set) when it cannot be.
int listen_abstract(const std::string& name, int backlog);

// Whether the process at the other end of a connection (or the listener a connection reached)
// runs as this process's user. Inline, as abstract_address.
inline bool peer_is_same_user(int fd) {
  ucred peer{};
  socklen_t size = sizeof peer;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && peer.uid == ::geteuid();
}

// Sends `bytes` with `fd` attached (SCM_RIGHTS: the receiver gets a descriptor of the same open
// file); false (errno set) when nothing was sent, so the descriptor did not go either. Inline, as
// abstract_address.
inline bool send_with_fd(int socket, std::string_view bytes, int fd) {
  iovec part{.iov_base = const_cast<char*>(bytes.data()), .iov_len = bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  ssize_t sent = -1;
  do sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent <= 0) return false;
  // The descriptor went with the first byte: the rest (never, for a short message into an empty
  // connection) follows without it.
  for (bytes.remove_prefix(static_cast<std::size_t>(sent)); !bytes.empty();) {
    const ssize_t more = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (more < 0 && errno == EINTR) continue;
    if (more < 0) break;
    bytes.remove_prefix(static_cast<std::size_t>(more));
  }
  return true;
}

// One read of a connection, as read(2) (`got`), and the descriptor that came with it
// (SCM_RIGHTS), close-on-exec; -1 when none did. Any more than one are closed. `fd_lost`: one
// came but the kernel dropped it (no descriptor left here).
struct Received {
  ssize_t got = -1;
  int fd = -1;
  bool fd_lost = false;
};
Received receive_with_fd(int socket, char* buffer, std::size_t size);

}  // namespace ezpz::sys
