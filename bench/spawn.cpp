#include "spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "ezpz/launch/render.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::string g_scratch;

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Starts `command` (dies when it cannot); `start` is the time just before posix_spawn().
pid_t spawn(Command& command, const posix_spawn_file_actions_t& actions, Clock::time_point& start) {
  auto argv = c_array(command.argv);
  auto envp = c_array(command.env);
  pid_t pid = 0;
  start = Clock::now();
  int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  if (rc != 0) die(command.argv[0] + ": posix_spawn: " + std::strerror(rc));
  return pid;
}

// wait4(), again after a signal; its rusage for the peak RSS.
int reap(pid_t pid, rusage& usage) {
  int status = 0;
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) die(std::string("wait4: ") + std::strerror(errno));
  }
  return status;
}

}  // namespace

void remove_on_exit(const std::string& scratch) {
  g_scratch = scratch;
}

void die(const std::string& message) {
  std::fprintf(stderr, "ezpz-bench: %s\n", message.c_str());
  if (!g_scratch.empty()) {
    std::error_code error;
    std::filesystem::remove_all(g_scratch, error);
  }
  std::exit(2);
}

Sample run_once(Command& command, const std::string& stdout_path, const std::string& stderr_path) {
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
  ::posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
  Sample sample;
  Clock::time_point start;
  pid_t pid = spawn(command, actions, start);
  rusage usage{};
  sample.status = reap(pid, usage);
  sample.ms = ms_since(start);
  ::posix_spawn_file_actions_destroy(&actions);
  sample.maxrss_kb = usage.ru_maxrss;
  return sample;
}

bool succeeded(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool exits_zero(Command command) {
  return succeeded(run_once(command, "/dev/null", "/dev/null").status);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

std::string read_file(const std::string& path) {
  return sys::read_file_if_present(path).value_or("");
}

bool is_executable(const std::string& path) {
  // find_program tests a name holding a '/' as a path, without searching PATH.
  return sys::find_program(path.find('/') == std::string::npos ? "./" + path : path, {})
      .has_value();
}

std::string capture(Command command, const std::string& scratch) {
  std::string out = scratch + "/capture.out";
  std::string err = scratch + "/capture.err";
  Sample sample = run_once(command, out, err);
  if (!succeeded(sample.status)) {
    die(shell_words(command.argv) + ": " + describe_status(sample.status) + "\n" + read_file(err) +
        read_file(out));
  }
  return read_file(out);
}

Traced run_traced(Command& command, const std::function<void(const Line&, pid_t)>& on_line) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) die(std::string("pipe2: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  Traced traced;
  Clock::time_point start;
  pid_t pid = spawn(command, actions, start);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string partial;
  char buffer[65536];
  auto emit = [&](double ms) {
    for (std::size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
      Line line{ms, partial.substr(0, nl)};
      partial.erase(0, nl + 1);
      on_line(line, pid);
      traced.lines.push_back(std::move(line));
    }
  };
  constexpr double k_limit_ms = 900e3;  // a hung job must not hang the benchmark
  bool killed = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno != EINTR) die(std::string("poll: ") + std::strerror(errno));
    if (!killed && ms_since(start) > k_limit_ms) {
      std::fprintf(stderr, "ezpz-bench: %s: still running after %.0f s, killed\n",
                   command.argv[0].c_str(), k_limit_ms / 1e3);
      ::kill(pid, SIGTERM);
      killed = true;
    }
    if (ready <= 0) continue;
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    double ms = ms_since(start);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer is gone
    partial.append(buffer, static_cast<std::size_t>(n));
    emit(ms);
  }
  ::close(fds[0]);
  if (!partial.empty()) {
    partial += '\n';
    emit(ms_since(start));
  }
  rusage usage{};
  traced.status = reap(pid, usage);
  traced.wall_ms = ms_since(start);
  return traced;
}

}  // namespace ezpz::bench
