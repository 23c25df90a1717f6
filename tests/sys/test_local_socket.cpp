// send_with_fd and receive_with_fd over a real socket pair: a descriptor comes as the same open
// file, close-on-exec. More than a read has room for, and one the kernel drops for want of a
// descriptor (RLIMIT_NOFILE: the case OutputPump::answer_pipe refuses), are said (fd_lost) and
// leave nothing open.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/sys/local_socket.hpp"
#include "tests/catch.hpp"

using ezpz::sys::receive_with_fd;
using ezpz::sys::Received;

namespace {

struct SocketPair {
  SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0); }
  ~SocketPair() {
    for (const int fd : ends) {
      if (fd >= 0) ::close(fd);
    }
  }
  int ends[2] = {-1, -1};
};

std::size_t open_descriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

ino_t inode(int fd) {
  struct stat info {};
  REQUIRE(::fstat(fd, &info) == 0);
  return info.st_ino;
}

// `bytes` with every one of `fds` attached, in one message (ezpz-rankenv sends one).
void send_fds(int socket, std::string_view bytes, const std::vector<int>& fds) {
  iovec part{.iov_base = const_cast<char*>(bytes.data()), .iov_len = bytes.size()};
  std::vector<char> control(CMSG_SPACE(fds.size() * sizeof(int)));
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
  std::memcpy(CMSG_DATA(header), fds.data(), fds.size() * sizeof(int));
  REQUIRE(::sendmsg(socket, &message, 0) == static_cast<ssize_t>(bytes.size()));
}

}  // namespace

TEST_CASE("a descriptor sent with bytes comes as the same open file, close-on-exec",
          "[local_socket]") {
  SocketPair pair;
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  REQUIRE(ezpz::sys::send_with_fd(pair.ends[0], "4! pipe\n", pipe_ends[0]));
  char buffer[64];
  const Received passed = receive_with_fd(pair.ends[1], buffer, sizeof buffer);
  CHECK(std::string_view(buffer, passed.got > 0 ? passed.got : 0) == "4! pipe\n");
  REQUIRE(passed.fd >= 0);
  CHECK(!passed.fd_lost);
  CHECK(inode(passed.fd) == inode(pipe_ends[0]));
  CHECK((::fcntl(passed.fd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK(::write(pipe_ends[1], "x", 1) == 1);
  char got = 0;
  CHECK(::read(passed.fd, &got, 1) == 1);
  CHECK(got == 'x');
  for (const int fd : {pipe_ends[0], pipe_ends[1], passed.fd}) ::close(fd);

  REQUIRE(::send(pair.ends[0], "plain", 5, 0) == 5);
  const Received plain = receive_with_fd(pair.ends[1], buffer, sizeof buffer);
  CHECK(plain.got == 5);
  CHECK(plain.fd == -1);
  CHECK(!plain.fd_lost);
  ::close(pair.ends[0]);
  pair.ends[0] = -1;
  const Received ended = receive_with_fd(pair.ends[1], buffer, sizeof buffer);
  CHECK(ended.got == 0);
  CHECK(ended.fd == -1);
}

TEST_CASE("descriptors past a read's room, or past the descriptor limit, are said lost",
          "[local_socket]") {
  SocketPair pair;
  char buffer[64];
  SECTION("six in one message: the first is kept, the rest closed") {
    std::vector<int> sent;
    for (int i = 0; i < 6; ++i) sent.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    send_fds(pair.ends[0], "4! pipe\n", sent);
    const std::size_t before = open_descriptors();
    const Received received = receive_with_fd(pair.ends[1], buffer, sizeof buffer);
    CHECK(received.got == 8);
    CHECK(received.fd_lost);  // room for four: the kernel closed two
    REQUIRE(received.fd >= 0);
    CHECK(inode(received.fd) == inode(sent[0]));
    CHECK(open_descriptors() == before + 1);  // the other three it installed, closed here
    ::close(received.fd);
    for (const int fd : sent) ::close(fd);
  }
  SECTION("none left to install it: lost, nothing kept") {
    int pipe_ends[2];
    REQUIRE(::pipe(pipe_ends) == 0);
    REQUIRE(ezpz::sys::send_with_fd(pair.ends[0], "4! pipe\n", pipe_ends[0]));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // the lowest free descriptor's number as the limit: no new one fits
      const int lowest = ::dup(0);
      ::close(lowest);
      rlimit limit{};
      ::getrlimit(RLIMIT_NOFILE, &limit);
      limit.rlim_cur = static_cast<rlim_t>(lowest);
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(3);
      const Received received = receive_with_fd(pair.ends[1], buffer, sizeof buffer);
      _exit(received.got == 8 && received.fd == -1 && received.fd_lost ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    for (const int fd : pipe_ends) ::close(fd);
  }
}
