#include "ezpz/sys/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace ezpz::sys {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Enough for any helper's output; the rest is drained and dropped, so the child never blocks
// on a full pipe.
constexpr std::size_t k_output_limit = 1 << 20;

// The NULL-terminated char* array exec wants, pointing into `strings` (never written through).
std::vector<char*> c_array(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

std::vector<std::string> environment_strings(const Env& env) {
  std::vector<std::string> strings;
  strings.reserve(env.size());
  for (const auto& [name, value] : env) {
    std::string& entry = strings.emplace_back();
    entry.reserve(name.size() + 1 + value.size());
    entry.append(name).append(1, '=').append(value);
  }
  return strings;
}

// Owns posix_spawn's attribute and file-action objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attributes{};
  SpawnSetup() {
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

void set_stdio(SpawnSetup& setup, const std::array<int, 3>& stdio) {
  for (int target = 0; target < 3; ++target) {
    if (stdio[target] == k_dev_null) {
      ::posix_spawn_file_actions_addopen(&setup.actions, target, "/dev/null",
                                         target == 0 ? O_RDONLY : O_WRONLY, 0);
    } else if (stdio[target] >= 0) {
      ::posix_spawn_file_actions_adddup2(&setup.actions, stdio[target], target);
    }
  }
}

// glibc's posix_spawn leaves its two internal signals (32 and 33: thread cancellation and
// setxid) ignored in the child unless they are in the default set, which sigaddset refuses them:
// their bits are set directly, so the child starts with every signal at its default, as one
// from fork and exec does.
sigset_t with_internal_signals(sigset_t signals) {
  static_assert(sizeof signals.__val[0] * 8 >= 33);
  signals.__val[0] |= (1UL << (32 - 1)) | (1UL << (33 - 1));
  return signals;
}

void set_attributes(SpawnSetup& setup, const SpawnOptions& options) {
  short flags = 0;
  if (options.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    ::posix_spawnattr_setpgroup(&setup.attributes, 0);
  }
  if (options.default_signals != nullptr) {
    flags |= POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    const sigset_t defaults = with_internal_signals(*options.default_signals);
    ::posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
    sigset_t empty;
    sigemptyset(&empty);
    ::posix_spawnattr_setsigmask(&setup.attributes, &empty);
  }
  ::posix_spawnattr_setflags(&setup.attributes, flags);
}

// Closes what it holds when it goes out of scope, unless released.
struct Pipe {
  int read = -1;
  int write = -1;
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  int release_read() { return std::exchange(read, -1); }
};

// Reads both pipes until both close (true) or `deadline` (false).
bool drain(std::array<int, 2> fds, Clock::time_point deadline, std::array<std::string*, 2> into) {
  char buffer[8192];
  std::array<bool, 2> open{true, true};
  while (open[0] || open[1]) {
    auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    std::array<pollfd, 2> ready{
        {{open[0] ? fds[0] : -1, POLLIN, 0}, {open[1] ? fds[1] : -1, POLLIN, 0}}};
    if (::poll(ready.data(), 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
    for (std::size_t i = 0; i < 2; ++i) {
      if (!open[i] || ready[i].revents == 0) continue;
      ssize_t n = ::read(fds[i], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open[i] = false;
        continue;
      }
      if (into[i]->size() < k_output_limit) into[i]->append(buffer, static_cast<std::size_t>(n));
    }
  }
  return true;
}

}  // namespace

Spawned spawn_process(const std::string& path, const std::vector<std::string>& argv, const Env& env,
                      const SpawnOptions& options) {
  SpawnSetup setup;
  set_stdio(setup, options.stdio);
  set_attributes(setup, options);
  const std::vector<std::string> env_strings = environment_strings(env);
  std::vector<char*> args = c_array(argv);
  std::vector<char*> envs = c_array(env_strings);
  Spawned spawned;
  spawned.error = ::posix_spawn(&spawned.pid, path.c_str(), &setup.actions, &setup.attributes,
                                args.data(), envs.data());
  if (spawned.error != 0) spawned.pid = -1;
  return spawned;
}

std::optional<int> wait_or_kill(pid_t pid, Clock::time_point deadline, pid_t kill_target) {
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return std::nullopt;
    if (Clock::now() >= deadline) break;
    // Short: doctor's wall time is its slowest probe plus this.
    std::this_thread::sleep_for(milliseconds(2));
  }
  ::kill(kill_target, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return std::nullopt;
}

CapturedChild start_captured(const std::vector<std::string>& argv, const Env& env) {
  CapturedChild child;
  if (argv.empty()) {
    child.start_error = "nothing to run";
    return child;
  }
  Pipe out, err;
  if (!out.open() || !err.open()) {
    child.start_error = fmt::format("pipe: {}", std::strerror(errno));
    return child;
  }
  const Spawned spawned = spawn_process(
      argv[0], argv, env, {.stdio = {k_dev_null, out.write, err.write}, .own_process_group = true});
  if (spawned.error != 0) {
    child.start_error = fmt::format("{}: {}", argv[0], std::strerror(spawned.error));
    return child;
  }
  child.pid = spawned.pid;
  child.fds = {out.release_read(), err.release_read()};
  return child;
}

CapturedRun finish_captured(const CapturedChild& child, Clock::time_point deadline) {
  CapturedRun run;
  run.start_error = child.start_error;
  if (child.pid < 0) return run;
  const bool complete = drain(child.fds, deadline, {&run.out, &run.err});
  ::close(child.fds[0]);
  ::close(child.fds[1]);
  // At the deadline the child's whole group goes: it was started as a group leader.
  std::optional<int> status =
      wait_or_kill(child.pid, complete ? deadline : Clock::now(), -child.pid);
  if (!status) {
    run.timed_out = true;
  } else if (WIFEXITED(*status)) {
    run.exit_code = WEXITSTATUS(*status);
  } else if (WIFSIGNALED(*status)) {
    run.signal = WTERMSIG(*status);
  }
  return run;
}

std::optional<std::string> run_captured(const std::vector<std::string>& argv, const Env& env) {
  CapturedRun run =
      finish_captured(start_captured(argv, env), Clock::now() + k_run_captured_timeout);
  if (run.exit_code != 0) return std::nullopt;
  return std::move(run.out);
}

}  // namespace ezpz::sys
