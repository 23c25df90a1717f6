#include "ezpz/sys/stdin_relay.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"

namespace ezpz::sys {
namespace {

constexpr std::size_t k_buffer = 64 * 1024;

Error relay_error(std::string_view what) {
  return Error(fmt::format("cannot relay stdin to rank 0: {}: {}", what, std::strerror(errno)),
               ExitCode::failure);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool is_dev_null(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

std::string random_name() {
  auto name = random_socket_name("stdin");
  if (!name) throw relay_error("getrandom");
  return *name;
}

int listen_at(const std::string& name) {
  const int fd = listen_abstract(name, 4);
  if (fd < 0) throw relay_error(name);
  return fd;
}

}  // namespace

bool stdin_is_closed() {
  return ::fcntl(STDIN_FILENO, F_GETFD) < 0;
}

bool stdin_may_carry_data() {
  return !stdin_is_closed() && !::isatty(STDIN_FILENO) && !is_dev_null(STDIN_FILENO);
}

StdinRelay::StdinRelay(bool carries_data) : socket_path_(k_no_stdin) {
  if (::pipe2(held_.data(), O_CLOEXEC) != 0) throw relay_error("pipe");
  if (!carries_data) return;
  socket_path_ = random_name();
  buffer_ = std::make_unique_for_overwrite<char[]>(k_buffer);
  listener_ = listen_at(socket_path_);
  source_ = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);  // a descriptor of its own
}

StdinRelay::~StdinRelay() {
  for (int* fd : {&listener_, &rank_, &source_, &held_[0], &held_[1]}) close_fd(*fd);
}

void StdinRelay::close_child_end() {
  close_fd(held_[0]);
}

void StdinRelay::watch(std::vector<pollfd>& fds) const {
  if (listener_ >= 0) fds.push_back({listener_, POLLIN, 0});
  if (rank_ < 0) return;
  if (written_ < pending_)
    fds.push_back({rank_, POLLOUT, 0});
  else if (source_ >= 0)
    fds.push_back({source_, POLLIN, 0});
}

void StdinRelay::transfer(const std::vector<pollfd>& fds) {
  for (const pollfd& entry : fds) {
    if (entry.revents == 0) continue;
    if (entry.fd == listener_)
      accept_rank();
    else if (entry.fd == source_ && rank_ >= 0)
      read_source();
    else if (entry.fd == rank_ && rank_ >= 0)
      write_rank();
  }
}

// One connection, rank 0's, from ezpz's own user: no one else is let in once it is there.
void StdinRelay::accept_rank() {
  rank_ = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (rank_ < 0) return;  // EAGAIN: a connection that went away
  if (!peer_is_same_user(rank_)) {
    close_fd(rank_);
    return;
  }
  close_fd(listener_);
  if (source_ < 0) finish_rank();  // nothing to give: EOF at once
}

void StdinRelay::read_source() {
  const ssize_t got = ::read(source_, buffer_.get(), k_buffer);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (got <= 0) {  // the end of ezpz's stdin: rank 0's ends too
    close_fd(source_);
    finish_rank();
    return;
  }
  pending_ = static_cast<std::size_t>(got);
  written_ = 0;
  write_rank();
}

void StdinRelay::write_rank() {
  while (written_ < pending_) {
    const ssize_t sent = ::send(rank_, buffer_.get() + written_, pending_ - written_, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && errno == EAGAIN) return;  // rank 0 reads slowly: poll says when
    if (sent < 0) {  // rank 0 has gone: the rest of the input is not wanted
      close_fd(source_);
      finish_rank();
      return;
    }
    written_ += static_cast<std::size_t>(sent);
  }
  pending_ = written_ = 0;
  if (source_ < 0) finish_rank();
}

void StdinRelay::finish_rank() {
  if (rank_ >= 0) ::shutdown(rank_, SHUT_WR);
  close_fd(rank_);
  pending_ = written_ = 0;
}

}  // namespace ezpz::sys
