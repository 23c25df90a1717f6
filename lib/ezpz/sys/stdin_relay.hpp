#pragma once
// ezpz's stdin, carried to rank 0 past the launcher.
//
// MPICH 4.0's Hydra forwards its stdin to rank 0 and dies (exit 255,
// "HYDU_sock_write ... Broken pipe") when rank 0 has already exited by the
// time it writes, or when its stdin is at EOF as fast ranks exit: `echo hi |
// ezpz launch -n 2 -- true` failed 40 times in 100. Given /dev/null, its proxy
// spins at 100% CPU on the EOF and never ends the rank's stdin: a rank that
// reads it hangs. So the launcher is given a stdin that never has data nor
// ends (a pipe ezpz holds open until the launcher exits), and rank 0's
// ezpz-rankenv connects to a Unix socket this relay listens on (EZPZ_STDIN) and
// takes that as its stdin. The socket is abstract (no file to create and
// remove: cheaper on the launch path), named at random, and only a process of
// ezpz's own user is let in. The relay copies ezpz's stdin there, and ends it
// when ezpz's stdin ends: a rank 0 that reads stdin gets all of it and then
// EOF; one that never reads it, or has exited, costs nothing. A stdin with
// nothing to give (/dev/null, a terminal, none) needs no socket:
// EZPZ_STDIN=/dev/null gives rank 0 that.
#include <poll.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ezpz/sys/local_socket.hpp"

namespace ezpz::sys {

// The variable that names the relay's socket to ezpz-rankenv: "@NAME", an
// abstract socket as ss(8) writes it.
inline constexpr const char* k_stdin_socket_variable = "EZPZ_STDIN";
// Its value when ezpz's stdin has nothing for rank 0: every rank reads /dev/null.
inline constexpr const char* k_no_stdin = "/dev/null";

// Whether ezpz's stdin can give rank 0 anything: not when it is closed, a terminal (a job
// never reads the terminal: a background launcher that did would be stopped) or /dev/null,
// a batch job's stdin. Those get no socket: no listener, no buffer, nothing to poll.
bool stdin_may_carry_data();
bool stdin_is_closed();

class StdinRelay {
 public:
  // The launcher's pipe, and, when ezpz's stdin may carry data, a fresh abstract socket to
  // listen on (rank 0 runs on this host); socket_path() is k_no_stdin otherwise. Throws Error
  // when it cannot.
  explicit StdinRelay(bool carries_data);
  ~StdinRelay();
  StdinRelay(const StdinRelay&) = delete;
  StdinRelay& operator=(const StdinRelay&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  // The launcher's stdin, and, once the launcher has it, the parent's copy closed.
  int launcher_stdin() const { return held_[0]; }
  void close_child_end();

  // Appends the pollfds the relay waits on now.
  void watch(std::vector<pollfd>& fds) const;
  // Accepts rank 0, reads ezpz's stdin, writes to rank 0: whatever poll found ready.
  void transfer(const std::vector<pollfd>& fds);

 private:
  void accept_rank();
  void read_source();
  void write_rank();
  void finish_rank();

  std::string socket_path_;
  int listener_ = -1;
  int rank_ = -1;    // rank 0's connection
  int source_ = -1;  // ezpz's stdin; -1 once it has ended (or when it carries nothing)
  std::array<int, 2> held_ = {-1, -1};
  // Left uninitialised: zero-filling 64 KiB cost every launch 16 page faults and a memset,
  // though most never read their stdin.
  std::unique_ptr<char[]> buffer_;
  std::size_t pending_ = 0;  // bytes of buffer_ not yet written to rank 0
  std::size_t written_ = 0;  // of those, written already
};

}  // namespace ezpz::sys
