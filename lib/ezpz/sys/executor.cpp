#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/world.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

// Boost.Process v1; every Boost.Process include of ezpz lives in this file.
#include <fmt/format.h>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "ezpz/error.hpp"

namespace ezpz::sys {
namespace {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Signals meant for the job rather than for ezpz: they are forwarded to the launcher's group.
constexpr std::array<int, 6> k_forwarded_signals = {SIGINT,  SIGTERM, SIGHUP,
                                                    SIGQUIT, SIGUSR1, SIGUSR2};

// The wait loop wakes at least this often, so a launcher whose SIGCHLD was consumed elsewhere
// (another thread of a caller that did not block it) is still noticed.
constexpr milliseconds k_poll_interval{500};

// Forwarded signals ezpz inherited as ignored (`nohup ezpz launch ...` ignores SIGHUP): they
// stay ignored, in ezpz and in the launcher, and are never forwarded.
sigset_t inherited_ignored_signals() {
  sigset_t ignored;
  sigemptyset(&ignored);
  for (int sig : k_forwarded_signals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      sigaddset(&ignored, sig);
    }
  }
  return ignored;
}

sigset_t supervised_signals(const sigset_t& ignored) {
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : k_forwarded_signals) {
    if (!sigismember(&ignored, sig)) sigaddset(&signals, sig);
  }
  sigaddset(&signals, SIGCHLD);
  return signals;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return fmt::format("signal {}", sig);
  }
}

std::string describe(milliseconds duration) {
  if (duration.count() % 1000 == 0) return fmt::format("{} s", duration.count() / 1000);
  return fmt::format("{} ms", duration.count());
}

Env child_environment(const Env& base, const EnvList& overrides) {
  Env env = base;
  for (const auto& [name, value] : overrides) env.insert_or_assign(name, value);
  return env;
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// Like execvp's search, except that empty entries (historically the current directory) are
// skipped: a launcher should never be picked up from wherever the user happens to stand.
std::optional<std::string> search_path(const std::string& name, std::string_view path_list) {
  std::size_t start = 0;
  while (start <= path_list.size()) {
    std::size_t end = std::min(path_list.find(':', start), path_list.size());
    std::string_view dir = path_list.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = fmt::format("{}/{}", dir, name);
      if (is_executable_file(candidate)) return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

// The launcher is searched on the PATH it will itself run with, not on ezpz's own.
std::string resolve_launcher(const std::string& name, const Env& env) {
  if (name.find('/') != std::string::npos) {
    if (is_executable_file(name)) return name;
    throw Error(fmt::format("{}: launcher not found or not executable", name), ExitCode::not_found);
  }
  if (auto path_list = get_nonempty(env, "PATH")) {
    if (auto found = search_path(name, *path_list)) return *found;
  }
  throw Error(fmt::format("{}: launcher not found on PATH", name), ExitCode::not_found);
}

// Strings plus the null-terminated pointer array execve wants. Built in the parent: between
// fork and exec the child may only make async-signal-safe calls, so it must not allocate.
class CStringArray {
 public:
  explicit CStringArray(std::vector<std::string> strings) : strings_(std::move(strings)) {
    for (std::string& text : strings_) pointers_.push_back(text.data());
    pointers_.push_back(nullptr);
  }
  CStringArray(const CStringArray&) = delete;
  CStringArray& operator=(const CStringArray&) = delete;
  char** data() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

std::vector<std::string> environment_strings(const Env& env) {
  std::vector<std::string> strings;
  strings.reserve(env.size());
  for (const auto& [name, value] : env) strings.push_back(fmt::format("{}={}", name, value));
  return strings;
}

// Blocks the supervised signals for the whole run, so that they queue for sigtimedwait instead
// of killing ezpz, and holds SIGCHLD at its default action, because an inherited SIG_IGN would
// make the kernel reap the launcher before its status is read. Restores both on exit.
class SupervisedSignalScope {
 public:
  explicit SupervisedSignalScope(const sigset_t& ignored) {
    const sigset_t signals = supervised_signals(ignored);
    pthread_sigmask(SIG_BLOCK, &signals, &saved_mask_);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGCHLD, &default_action, &saved_sigchld_);
  }
  ~SupervisedSignalScope() {
    sigaction(SIGCHLD, &saved_sigchld_, nullptr);
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }
  SupervisedSignalScope(const SupervisedSignalScope&) = delete;
  SupervisedSignalScope& operator=(const SupervisedSignalScope&) = delete;

 private:
  sigset_t saved_mask_{};
  struct sigaction saved_sigchld_ {};
};

// Runs in the forked child, before exec (async-signal-safe calls only). Its own process group
// lets ezpz signal the launcher and everything it starts at once; the launcher must see the
// signals ezpz blocks, and an ignored signal would stay ignored across exec.
void prepare_child_process(const sigset_t& ignored) {
  ::setpgid(0, 0);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int sig : k_forwarded_signals) {
    if (!sigismember(&ignored, sig)) sigaction(sig, &default_action, nullptr);
  }
  sigaction(SIGCHLD, &default_action, nullptr);
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
}

// Boost.Process hooks. execve gets the plan's argv exactly (Boost would put the resolved path in
// argv[0]) and exactly the planned environment.
struct LaunchHooks : bp::extend::handler {
  char** argv;
  char** envp;
  bool* exec_failed;
  const sigset_t* ignored;
  int stdout_fd;  // -1: inherited

  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    exec.cmd_line = argv;
    exec.env = envp;
    prepare_child_process(*ignored);
    if (stdout_fd >= 0) ::dup2(stdout_fd, STDOUT_FILENO);
  }
  // Boost reports a failed execve through a pipe but leaves the dead child unreaped.
  template <class Executor>
  void on_error(Executor& exec, const std::error_code&) const {
    if (exec.pid <= 0) return;  // fork itself failed: there is no child
    *exec_failed = true;
    ::waitpid(exec.pid, nullptr, 0);
  }
};

Error spawn_error(const std::string& name, const std::string& path, const std::error_code& error,
                  bool exec_failed) {
  if (exec_failed) {
    return Error(fmt::format("{}: cannot execute {}: {}", name, path, error.message()),
                 ExitCode::not_found);
  }
  return Error(fmt::format("{}: cannot start the launcher: {}", name, error.message()),
               ExitCode::failure);
}

pid_t spawn_launcher(const std::string& path, const LaunchPlan& plan, const Env& env,
                     const sigset_t& ignored, int stdout_fd) {
  CStringArray argv(plan.argv);
  CStringArray envp(environment_strings(env));
  bool exec_failed = false;
  LaunchHooks hooks{{}, argv.data(), envp.data(), &exec_failed, &ignored, stdout_fd};
  std::error_code error;
  auto start = [&](auto&&... stdin_redirect) {
    return bp::child(bp::exe = path, hooks, error, stdin_redirect...);
  };
  // The launcher runs in a background process group, and a background group that reads the
  // terminal is stopped by SIGTTIN; a job never needs the terminal's input anyway.
  bp::child child = ::isatty(STDIN_FILENO) ? start(bp::std_in < bp::null) : start();
  if (error) throw spawn_error(plan.argv.front(), path, error, exec_failed);
  child.detach();  // the wait loop below owns reaping; ~child must neither wait nor terminate
  const pid_t pid = child.id();
  // The usual guard against the fork/exec race. The child already did it before exec, and Boost
  // returns only after the exec, so EACCES here is expected and harmless.
  ::setpgid(pid, pid);
  return pid;
}

void kill_group(pid_t group, int sig) {
  if (::kill(-group, sig) != 0 && errno != ESRCH) {
    fmt::print(stderr, "ezpz: cannot send {} to the launcher's group: {}\n", signal_name(sig),
               std::strerror(errno));
  }
}

// What ezpz does with the signals it receives while the launcher runs: forward each to the
// launcher's group; SIGKILL the group when a SIGINT/SIGTERM/SIGHUP has gone unheeded for the
// grace period, or at once on a second SIGINT/SIGTERM (the user insists).
class SignalForwarder {
 public:
  SignalForwarder(pid_t launcher, milliseconds grace) : launcher_(launcher), grace_(grace) {}

  void handle(int sig) {
    if (killed_) return;
    const bool interrupt = sig == SIGINT || sig == SIGTERM;
    if (interrupt && ++interrupts_ >= 2) {
      fmt::print(stderr, "ezpz: second {}; sending SIGKILL to the launcher (pid {})\n",
                 signal_name(sig), launcher_);
      kill_now();
      return;
    }
    fmt::print(stderr, "ezpz: forwarding {} to the launcher (pid {})\n", signal_name(sig),
               launcher_);
    kill_group(launcher_, sig);
    if ((interrupt || sig == SIGHUP) && !deadline_set_) {
      deadline_ = Clock::now() + grace_;
      deadline_set_ = true;
      first_signal_ = sig;
    }
  }

  // ProcessOptions::timeout ran out: stop the job as a SIGTERM to ezpz would.
  void time_out(milliseconds limit) {
    if (killed_ || deadline_set_) return;
    fmt::print(stderr, "ezpz: launcher still running after {}; sending SIGTERM\n", describe(limit));
    kill_group(launcher_, SIGTERM);
    deadline_ = Clock::now() + grace_;
    deadline_set_ = true;
    first_signal_ = SIGTERM;
  }

  void enforce_grace() {
    if (killed_ || !deadline_set_ || Clock::now() < deadline_) return;
    fmt::print(stderr, "ezpz: launcher still running {} after {}; sending SIGKILL\n",
               describe(grace_), signal_name(first_signal_));
    kill_now();
  }

  // The signal that asked the job to stop (SIGINT, SIGTERM, SIGHUP), or 0.
  int stop_signal() const { return first_signal_; }

  // How long the wait loop may sleep before something is due.
  milliseconds wait_budget() const {
    if (killed_ || !deadline_set_) return k_poll_interval;
    auto left = std::chrono::ceil<milliseconds>(deadline_ - Clock::now());
    return std::clamp(left, milliseconds(0), k_poll_interval);
  }

 private:
  void kill_now() {
    kill_group(launcher_, SIGKILL);
    killed_ = true;
  }

  pid_t launcher_;
  milliseconds grace_;
  // A plain time point and a flag: GCC 12 warns (wrongly) about an optional one.
  Clock::time_point deadline_{};
  bool deadline_set_ = false;
  int first_signal_ = 0;
  int interrupts_ = 0;
  bool killed_ = false;
};

// The next supervised signal, or 0 when `budget` passed without one.
int wait_for_signal(const sigset_t& signals, milliseconds budget) {
  const auto count = budget.count();
  const timespec timeout{static_cast<time_t>(count / 1000),
                         static_cast<long>(count % 1000) * 1000000};
  const int sig = ::sigtimedwait(&signals, nullptr, &timeout);
  return sig > 0 ? sig : 0;
}

// A launcher that died of a signal gives 128+N. One that exits on its own after
// ezpz forwarded a stop signal reports that signal: Hydra, asked to stop, exits
// 15, 255 or even 0, and an interrupted job must never look like a success.
int exit_code_of(int wait_status, int stop_signal) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  if (stop_signal != 0) return 128 + stop_signal;
  return WEXITSTATUS(wait_status);
}

// The launcher's exit code once it has exited. WNOWAIT leaves it a zombie while the rest of its
// group is killed: the zombie keeps its pid, and so the group id, from being reused meanwhile.
std::optional<int> reap_if_exited(pid_t launcher, int stop_signal) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(launcher), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    throw Error(
        fmt::format("launcher (pid {}): cannot wait for it: {}", launcher, std::strerror(errno)),
        ExitCode::failure);
  }
  if (info.si_pid != launcher) return std::nullopt;
  kill_group(launcher, SIGKILL);  // nothing the launcher started may outlive it
  int status = 0;
  ::waitpid(launcher, &status, 0);
  return exit_code_of(status, stop_signal);
}

int supervise(pid_t launcher, const ProcessOptions& options, const sigset_t& ignored) {
  const sigset_t signals = supervised_signals(ignored);
  SignalForwarder forwarder(launcher, options.grace);
  const bool limited = options.timeout.count() > 0;
  const Clock::time_point give_up = Clock::now() + options.timeout;
  bool timed_out = false;
  while (true) {
    milliseconds budget = forwarder.wait_budget();
    if (limited && !timed_out) {
      auto left = std::chrono::ceil<milliseconds>(give_up - Clock::now());
      budget = std::clamp(left, milliseconds(0), budget);
    }
    const int sig = wait_for_signal(signals, budget);
    if (sig != 0 && sig != SIGCHLD) forwarder.handle(sig);
    if (auto code = reap_if_exited(launcher, forwarder.stop_signal())) return *code;
    if (limited && !timed_out && Clock::now() >= give_up) {
      forwarder.time_out(options.timeout);
      timed_out = true;
    }
    forwarder.enforce_grace();
  }
}

// The file the launcher's stdout goes to, opened for the spawn; -1 when inherited.
class StdoutFile {
 public:
  explicit StdoutFile(const std::string& path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      throw Error(fmt::format("{}: {}", path, std::strerror(errno)), ExitCode::failure);
    }
  }
  ~StdoutFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  StdoutFile(const StdoutFile&) = delete;
  StdoutFile& operator=(const StdoutFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace

ProcessExecutor::ProcessExecutor(Env base, ProcessOptions options)
    : base_(std::move(base)), options_(options) {}

// Signals are blocked in the calling thread only; ezpz is single-threaded, and a caller with
// other threads must block the supervised signals in them too, or they may take the signals.
int ProcessExecutor::run(const LaunchPlan& plan) {
  if (plan.argv.empty()) throw Error("launch plan: no launcher to run", ExitCode::failure);
  const Env env = child_environment(base_, plan.env);
  const std::string path = resolve_launcher(plan.argv.front(), env);
  // Only once the launcher is known to exist: a failed launch leaves nothing behind.
  write_files(plan.files);
  StdoutFile out(options_.stdout_path);
  // Blocked before the fork, so no signal or SIGCHLD slips past the wait loop.
  const sigset_t ignored = inherited_ignored_signals();
  SupervisedSignalScope signal_scope(ignored);
  const pid_t launcher = spawn_launcher(path, plan, env, ignored, out.fd());
  return supervise(launcher, options_, ignored);
}

}  // namespace ezpz::sys
