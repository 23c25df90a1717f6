#pragma once
// Abstract Unix sockets between ezpz and the ranks on its own host: the stdin relay
// (stdin_relay.hpp) and the ranks' records sent straight to ezpz (rank_records.hpp's
// k_output_socket_variable). Abstract: no file to create and remove, so nothing on the launch
// path's disk and nothing left behind. Named at random (nobody can guess a name to take it
// first) and only a process of ezpz's own user is let in (abstract names have no permissions).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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

}  // namespace ezpz::sys
