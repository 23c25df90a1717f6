#include "ezpz/runtime/listener.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"

namespace ezpz::dist {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head) freeaddrinfo(head);
  }
};

// One non-blocking connect, bounded by `budget` so an address that drops
// packets (instead of refusing) cannot stall past the deadline.
bool try_connect(const addrinfo& address, milliseconds budget) {
  int fd = socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  address.ai_protocol);
  if (fd < 0) return false;
  bool connected = connect(fd, address.ai_addr, address.ai_addrlen) == 0;
  if (!connected && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    connected = poll(&p, 1, static_cast<int>(budget.count())) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
  }
  close(fd);
  return connected;
}

bool any_accepts(const AddressList& list, milliseconds budget) {
  for (const addrinfo* a = list.head; a; a = a->ai_next) {
    if (try_connect(*a, budget)) return true;
  }
  return false;
}

}  // namespace

void wait_for_listener(const std::string& host, int port, long timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  AddressList list;
  int status = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list.head);
  if (status != 0) {
    throw Error(fmt::format("cannot resolve {}: {}", host, gai_strerror(status)),
                ExitCode::failure);
  }
  auto deadline = Clock::now() + milliseconds(timeout_ms);
  milliseconds pause(5);
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (any_accepts(list, std::clamp(left, milliseconds(1), milliseconds(1000)))) return;
    if (Clock::now() >= deadline) {
      throw Error(fmt::format("nothing accepted a connection at {}:{} within {:g} s", host, port,
                              static_cast<double>(timeout_ms) / 1000.0),
                  ExitCode::failure);
    }
    std::this_thread::sleep_for(std::min(pause, left));
    pause = std::min(pause * 2, milliseconds(100));
  }
}

}  // namespace ezpz::dist
