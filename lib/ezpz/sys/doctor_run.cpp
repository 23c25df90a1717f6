// Running doctor's helper programs (`ezpz-smoke --probe`, `mpiexec --version`)
// with their output captured and a deadline.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ezpz/sys/doctor_probes.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Enough for any probe's output; the rest is drained and dropped, so the
// child never blocks on a full pipe.
constexpr std::size_t k_output_limit = 1 << 20;

struct Pipe {
  int read = -1;
  int write = -1;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  return {fds[0], fds[1]};
}

struct Spawned {
  pid_t pid = 0;
  std::array<int, 2> fds{-1, -1};  // read ends of stdout and stderr
};

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

// argv[0] runs in a process group of its own, so a deadline kills whatever it started too.
std::string spawn(std::vector<std::string> argv, const Env& env, Spawned& spawned) {
  Pipe out = make_pipe(), err = make_pipe();
  if (out.read < 0 || err.read < 0) return fmt::format("pipe: {}", std::strerror(errno));
  SpawnSetup setup;
  ::posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&setup.actions, out.write, 1);
  ::posix_spawn_file_actions_adddup2(&setup.actions, err.write, 2);
  ::posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETPGROUP);
  ::posix_spawnattr_setpgroup(&setup.attributes, 0);
  std::vector<std::string> strings;
  for (const auto& [name, value] : env) strings.push_back(name + "=" + value);
  std::vector<char*> args, envs;
  for (std::string& arg : argv) args.push_back(arg.data());
  for (std::string& text : strings) envs.push_back(text.data());
  args.push_back(nullptr);
  envs.push_back(nullptr);
  int rc = ::posix_spawn(&spawned.pid, argv[0].c_str(), &setup.actions, &setup.attributes,
                         args.data(), envs.data());
  ::close(out.write);
  ::close(err.write);
  spawned.fds = {out.read, err.read};
  if (rc == 0) return "";
  ::close(out.read);
  ::close(err.read);
  spawned.fds = {-1, -1};
  return fmt::format("{}: {}", argv[0], std::strerror(rc));
}

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

doctor::ProgramRun finish(Spawned spawned, doctor::ProgramRun run, Clock::time_point deadline) {
  bool complete = drain(spawned.fds, deadline, {&run.out, &run.err});
  ::close(spawned.fds[0]);
  ::close(spawned.fds[1]);
  // At the deadline the probe's whole group goes: it was started as a group leader.
  std::optional<int> status =
      wait_or_kill(spawned.pid, complete ? deadline : Clock::now(), -spawned.pid);
  if (!status) {
    run.timed_out = true;
  } else if (WIFEXITED(*status)) {
    run.exit_code = WEXITSTATUS(*status);
  } else if (WIFSIGNALED(*status)) {
    run.signal = WTERMSIG(*status);
  }
  return run;
}

}  // namespace

std::future<doctor::ProgramRun> start_program(std::vector<std::string> argv, const Env& env,
                                              milliseconds timeout) {
  doctor::ProgramRun run;
  run.path = argv.empty() ? "" : argv[0];
  run.timeout_s = std::chrono::duration<double>(timeout).count();
  Spawned spawned;
  run.start_error = argv.empty() ? "nothing to run" : spawn(argv, env, spawned);
  if (!run.start_error.empty()) {
    std::promise<doctor::ProgramRun> failed;
    failed.set_value(run);
    return failed.get_future();
  }
  // Spawned here, in the caller's thread, so it starts now; waited for in another.
  return std::async(std::launch::async, finish, spawned, std::move(run), Clock::now() + timeout);
}

}  // namespace ezpz::sys
