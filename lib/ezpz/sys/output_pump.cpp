#include "ezpz/sys/output_pump.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ezpz/error.hpp"

namespace ezpz::sys {
namespace {

// One read's worth: large enough that 100 MB of output costs a few thousand reads.
constexpr std::size_t k_chunk = 64 * 1024;

// Writes all of `data`; false on an error other than an interruption.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

OutputPump::OutputPump(const std::string& record_path, std::size_t tail_bytes)
    : tail_bytes_(tail_bytes), buffer_(k_chunk) {
  const std::array<int, 2> destinations = {STDOUT_FILENO, STDERR_FILENO};
  for (std::size_t i = 0; i < pipes_.size(); ++i) {
    std::array<int, 2> ends{};
    if (::pipe2(ends.data(), O_CLOEXEC) != 0) {
      throw Error(fmt::format("cannot create a pipe for the launcher's output: {}",
                              std::strerror(errno)),
                  ExitCode::failure);
    }
    pipes_[i] = {ends[0], ends[1], destinations[i]};
  }
  if (record_path.empty()) return;
  record_fd_ = ::open(record_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (record_fd_ < 0) {
    throw Error(fmt::format("{}: {}", record_path, std::strerror(errno)), ExitCode::failure);
  }
}

OutputPump::~OutputPump() {
  for (Pipe& pipe : pipes_) {
    close_fd(pipe.read_end);
    close_fd(pipe.write_end);
  }
  close_fd(record_fd_);
}

void OutputPump::close_child_ends() {
  for (Pipe& pipe : pipes_) close_fd(pipe.write_end);
}

bool OutputPump::open() const {
  return std::any_of(pipes_.begin(), pipes_.end(), [](const Pipe& p) { return p.read_end >= 0; });
}

void OutputPump::watch(std::vector<pollfd>& fds) const {
  for (const Pipe& pipe : pipes_) {
    if (pipe.read_end >= 0) fds.push_back({pipe.read_end, POLLIN, 0});
  }
}

std::size_t OutputPump::transfer(const std::vector<pollfd>& fds) {
  std::size_t moved = 0;
  for (const pollfd& entry : fds) {
    if (entry.revents == 0) continue;
    for (Pipe& pipe : pipes_) {
      if (pipe.read_end == entry.fd && pipe.read_end >= 0) moved += read_once(pipe);
    }
  }
  return moved;
}

void OutputPump::drain(std::chrono::steady_clock::time_point deadline) {
  using namespace std::chrono;
  while (open()) {
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return;
    std::vector<pollfd> fds;
    watch(fds);
    if (::poll(fds.data(), fds.size(), static_cast<int>(left)) > 0) transfer(fds);
  }
}

std::size_t OutputPump::read_once(Pipe& pipe) {
  const ssize_t got = ::read(pipe.read_end, buffer_.data(), buffer_.size());
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (got <= 0) {  // end of file: every writer has gone
    close_fd(pipe.read_end);
    return 0;
  }
  const std::string_view data(buffer_.data(), static_cast<std::size_t>(got));
  // ezpz's own output closed (`ezpz launch ... | head`): the job goes on, recorded.
  if (pipe.passed_to >= 0 && !write_all(pipe.passed_to, data)) pipe.passed_to = -1;
  keep(data);
  if (&pipe == &pipes_[1] && watcher_ && !tripped_) show_lines(data);
  return data.size();
}

void OutputPump::watch_stderr_lines(std::function<bool(std::string_view)> watcher) {
  watcher_ = std::move(watcher);
}

void OutputPump::show_lines(std::string_view data) {
  partial_line_.append(data);
  std::size_t start = 0;
  for (std::size_t end; (end = partial_line_.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string_view line(partial_line_.data() + start, end - start);
    if (watcher_(line)) {
      tripped_ = std::string(line);
      partial_line_.clear();
      return;
    }
  }
  partial_line_.erase(0, start);
  // A line longer than this is no launcher's report: let it go rather than grow.
  if (partial_line_.size() > k_chunk) partial_line_.clear();
}

void OutputPump::keep(std::string_view data) {
  if (record_fd_ >= 0 && !write_all(record_fd_, data)) {
    // A full disk must not stop the job: say so once and stop recording.
    fmt::print(stderr, "ezpz: cannot record the job's output: {}; recording stopped\n",
               std::strerror(errno));
    close_fd(record_fd_);
  }
  if (tail_bytes_ == 0) return;
  tail_.append(data);
  // Trimmed in large steps so the tail is not shifted on every read.
  if (tail_.size() > 2 * tail_bytes_) tail_.erase(0, tail_.size() - tail_bytes_);
}

}  // namespace ezpz::sys
