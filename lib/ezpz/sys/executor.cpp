#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/world.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
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
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/output/rank_records.hpp"
#include "ezpz/sys/output_pump.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/spawn.hpp"
#include "ezpz/sys/stdin_relay.hpp"
#include "ezpz/sys/walltime_warner.hpp"

namespace ezpz::sys {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Signals meant for the job rather than for ezpz: they are forwarded to the launcher's group
// (supervised_job_signals, core/signals.hpp).
const std::span<const int> k_forwarded_signals = supervised_job_signals();

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

std::string describe(milliseconds duration) {
  if (duration.count() % 1000 == 0) return fmt::format("{} s", duration.count() / 1000);
  return fmt::format("{} ms", duration.count());
}

// The launcher is searched on the PATH it will itself run with, not on ezpz's own.
std::string resolve_launcher(const std::string& name, const Env& env) {
  if (auto found = find_program(name, env)) return *found;
  if (name.find('/') != std::string::npos) {
    throw Error(fmt::format("{}: launcher not found or not executable", name), ExitCode::not_found);
  }
  throw Error(fmt::format("{}: launcher not found on PATH", name), ExitCode::not_found);
}

// Blocks the supervised signals for the whole run, so that they queue for the signalfd instead
// of killing ezpz, and holds SIGCHLD at its default action, because an inherited SIG_IGN would
// make the kernel reap the launcher before its status is read. Ignores SIGPIPE, so that a closed
// stdout (`ezpz launch ... | head`) is an error to handle while passing output on, not death.
// Restores all three on exit.
class SupervisedSignalScope {
 public:
  explicit SupervisedSignalScope(const sigset_t& ignored) {
    const sigset_t signals = supervised_signals(ignored);
    pthread_sigmask(SIG_BLOCK, &signals, &saved_mask_);
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(SIGCHLD, &action, &saved_sigchld_);
    action.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &action, &saved_sigpipe_);
  }
  ~SupervisedSignalScope() {
    sigaction(SIGPIPE, &saved_sigpipe_, nullptr);
    sigaction(SIGCHLD, &saved_sigchld_, nullptr);
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }
  // Whether SIGPIPE was ignored before: the launcher inherits what ezpz was given.
  bool sigpipe_was_ignored() const { return saved_sigpipe_.sa_handler == SIG_IGN; }
  SupervisedSignalScope(const SupervisedSignalScope&) = delete;
  SupervisedSignalScope& operator=(const SupervisedSignalScope&) = delete;

 private:
  sigset_t saved_mask_{};
  struct sigaction saved_sigchld_ {};
  struct sigaction saved_sigpipe_ {};
};

// Where the launcher's output goes and which signal dispositions it inherits.
struct ChildSetup {
  sigset_t ignored;  // forwarded signals ezpz inherited as ignored
  bool ignore_sigpipe = false;
  int stdin_fd = k_inherit;  // a terminal's, or none, is replaced by /dev/null
  int stdout_fd = k_inherit;
  int stderr_fd = k_inherit;
};

// The signals the launcher gets at their default action: those ezpz blocks or handles while it
// runs, since an ignored one would stay ignored across exec; not those ezpz was given ignored.
sigset_t launcher_default_signals(const ChildSetup& setup) {
  sigset_t signals = supervised_signals(setup.ignored);
  if (!setup.ignore_sigpipe) sigaddset(&signals, SIGPIPE);
  sigaddset(&signals, SIGXFSZ);  // the job's own file-size limit kills as it would without ezpz
  return signals;
}

// posix_spawn reports the fork's failure and the exec's alike; EAGAIN and ENOMEM are the
// fork's (too many processes, no memory), the others say why `path` cannot run.
Error spawn_error(const std::string& name, const std::string& path, int error) {
  if (error != EAGAIN && error != ENOMEM) {
    return Error(fmt::format("{}: cannot execute {}: {}", name, path, std::strerror(error)),
                 ExitCode::not_found);
  }
  return Error(fmt::format("{}: cannot start the launcher: {}", name, std::strerror(error)),
               ExitCode::failure);
}

// The launcher in a process group of its own, so that ezpz signals it and everything it starts
// at once, with the plan's argv exactly (argv[0] as planned, not the resolved path) and exactly
// the planned environment. posix_spawn returns once the exec has happened, group and all.
pid_t spawn_launcher(const std::string& path, const LaunchPlan& plan, const Env& env,
                     const ChildSetup& setup) {
  const sigset_t defaults = launcher_default_signals(setup);
  // The launcher runs in a background process group, and a background group that reads the
  // terminal is stopped by SIGTTIN; a job never needs the terminal's input anyway. A closed
  // stdin would be the launcher's first open(): /dev/null holds the place.
  const bool from_null =
      setup.stdin_fd == k_inherit && (::isatty(STDIN_FILENO) || stdin_is_closed());
  const Spawned child = spawn_process(
      path, plan.argv, env,
      {.stdio = {from_null ? k_dev_null : setup.stdin_fd, setup.stdout_fd, setup.stderr_fd},
       .own_process_group = true,
       .default_signals = &defaults});
  if (child.error != 0) throw spawn_error(plan.argv.front(), path, child.error);
  return child.pid;
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

  // Every signal sent or forwarded, for the verdict: a rank that died of one died of ezpz's
  // doing (or the user's), never of its node's.
  const std::vector<SentSignal>& sent() const { return sent_; }
  void note(int sig, std::string_view why) {
    const double at = std::chrono::duration<double>(Clock::now() - started_).count();
    sent_.push_back({.signal = sig, .at_s = at, .why = std::string(why)});
  }

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
    note(sig, "forwarded");
    if (job_only_signal(sig)) return;
    if (user_signal_ == 0) user_signal_ = sig;
    if (!deadline_set_) {
      deadline_ = Clock::now() + grace_;
      deadline_set_ = true;
      first_signal_ = sig;
    }
  }

  // A watchdog fired (`why` says which): stop the job as a SIGTERM to ezpz would.
  // False when the job is already being stopped.
  bool stop(const std::string& why) {
    if (killed_ || deadline_set_) return false;
    fmt::print(stderr, "ezpz: {}; sending SIGTERM to the launcher\n", why);
    kill_group(launcher_, SIGTERM);
    note(SIGTERM, "stop");
    deadline_ = Clock::now() + grace_;
    deadline_set_ = true;
    first_signal_ = SIGTERM;
    return true;
  }

  void enforce_grace() {
    if (killed_ || !deadline_set_ || Clock::now() < deadline_) return;
    fmt::print(stderr, "ezpz: launcher still running {} after {}; sending SIGKILL\n",
               describe(grace_), signal_name(first_signal_));
    kill_now();
  }

  // The signal that asked the job to stop (SIGINT, SIGTERM, SIGHUP; a watchdog's SIGTERM), or 0.
  int stop_signal() const { return first_signal_; }
  // The first SIGINT, SIGTERM or SIGHUP ezpz itself received, or 0.
  int user_signal() const { return user_signal_; }

  // How long the wait loop may sleep before something is due.
  milliseconds wait_budget() const {
    if (killed_ || !deadline_set_) return k_poll_interval;
    auto left = std::chrono::ceil<milliseconds>(deadline_ - Clock::now());
    return std::clamp(left, milliseconds(0), k_poll_interval);
  }

 private:
  void kill_now() {
    kill_group(launcher_, SIGKILL);
    note(SIGKILL, "kill");
    killed_ = true;
  }

  pid_t launcher_;
  milliseconds grace_;
  // A plain time point and a flag: GCC 12 warns (wrongly) about an optional one.
  Clock::time_point deadline_{};
  bool deadline_set_ = false;
  int first_signal_ = 0;
  int user_signal_ = 0;
  int interrupts_ = 0;
  bool killed_ = false;
  Clock::time_point started_ = Clock::now();
  std::vector<SentSignal> sent_;
};

// A launcher that died of a signal gives 128+N. One that exits on its own after
// ezpz forwarded a stop signal reports that signal: Hydra, asked to stop, exits
// 15, 255 or even 0, and an interrupted job must never look like a success.
int exit_code_of(int wait_status, int stop_signal) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  if (stop_signal != 0) return 128 + stop_signal;
  return WEXITSTATUS(wait_status);
}

// The launcher's wait status once it has exited. WNOWAIT leaves it a zombie while the rest of
// its group is killed: the zombie keeps its pid, and so the group id, from being reused meanwhile.
std::optional<int> reap_if_exited(pid_t launcher) {
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
  return status;
}

// The supervised signals as a file descriptor, so one poll waits for them and for output.
class SignalFd {
 public:
  explicit SignalFd(const sigset_t& signals) {
    fd_ = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0) {
      throw Error(fmt::format("cannot watch signals: {}", std::strerror(errno)), ExitCode::failure);
    }
  }
  ~SignalFd() { ::close(fd_); }
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;
  int fd() const { return fd_; }

  // Every signal pending now, in arrival order.
  std::vector<int> take() {
    std::vector<int> signals;
    signalfd_siginfo info{};
    while (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      signals.push_back(static_cast<int>(info.ssi_signo));
    }
    return signals;
  }

 private:
  int fd_ = -1;
};

// The watchdogs: --time-limit (wall clock), --idle-timeout (no output) and --kill-on-bad-exit
// (a rank failed, the job still runs).
class Watchdogs {
 public:
  explicit Watchdogs(const ProcessOptions& o)
      : wall_limit_(o.timeout),
        idle_limit_(o.capture_output ? o.idle_timeout : milliseconds(0)),
        failure_limit_(o.stop_after_rank_failure),
        started_(Clock::now()),
        last_output_(started_) {}

  void saw_output() { last_output_ = Clock::now(); }
  // ezpz-rankenv's report of a rank's failure, the first one: the pump's line (set once, and
  // the pump outlives the watch), not a copy.
  void saw_rank_failure(const std::string& line) {
    if (!failure_limit_ || failure_line_ != nullptr) return;
    failed_at_ = Clock::now();
    failure_line_ = &line;
  }

  // The watchdog whose limit has passed, if any, and why, in words.
  std::optional<std::pair<Watchdog, std::string>> due() const {
    const auto now = Clock::now();
    if (wall_limit_.count() > 0 && now >= started_ + wall_limit_) {
      return std::pair{Watchdog::timeout,
                       fmt::format("time limit of {} reached", describe(wall_limit_))};
    }
    if (idle_limit_.count() > 0 && now >= last_output_ + idle_limit_) {
      return std::pair{Watchdog::idle, fmt::format("no output for {}", describe(idle_limit_))};
    }
    if (failure_line_ != nullptr && now >= failed_at_ + *failure_limit_) {
      return std::pair{Watchdog::rank_failed,
                       fmt::format("the job still ran {} after \"{}\" (--kill-on-bad-exit)",
                                   describe(*failure_limit_), *failure_line_)};
    }
    return std::nullopt;
  }

  // How long the wait may last before a limit passes.
  milliseconds until_due(milliseconds budget) const {
    const auto now = Clock::now();
    auto clamp_to = [&](Clock::time_point at) {
      budget = std::clamp(std::chrono::ceil<milliseconds>(at - now), milliseconds(0), budget);
    };
    if (wall_limit_.count() > 0) clamp_to(started_ + wall_limit_);
    if (idle_limit_.count() > 0) clamp_to(last_output_ + idle_limit_);
    if (failure_line_ != nullptr) clamp_to(failed_at_ + *failure_limit_);
    return budget;
  }

 private:
  milliseconds wall_limit_;
  milliseconds idle_limit_;
  std::optional<milliseconds> failure_limit_;
  const std::string* failure_line_ = nullptr;  // none until a rank failed...
  Clock::time_point failed_at_;                // ...when ezpz saw it
  Clock::time_point started_;
  Clock::time_point last_output_;
};

// Watches the launcher's own processes (ProcessOptions::launcher_parts) once a second: one dead
// of a signal (SIGKILLed) is its launcher's death, though the launcher itself lives on.
class PartsWatch {
 public:
  PartsWatch(pid_t launcher, const std::vector<std::string>& names)
      : launcher_(launcher), names_(names), next_(Clock::now() + k_every) {}

  // The part that died, the first time one is seen dead.
  std::optional<KilledPart> killed() {
    if (names_.empty() || done_ || Clock::now() < next_) return std::nullopt;
    next_ = Clock::now() + k_every;
    std::optional<KilledPart> part = killed_part(launcher_, names_);
    done_ = part.has_value();
    return part;
  }

 private:
  static constexpr milliseconds k_every{1000};
  pid_t launcher_;
  const std::vector<std::string>& names_;
  Clock::time_point next_;
  bool done_ = false;
};

// Whether ezpz's working directory, the job's, was deleted under it: the kernel then names it
// "/path (deleted)", and getcwd() fails with ENOENT.
bool cwd_missing() {
  std::array<char, 4096> buffer{};
  return ::getcwd(buffer.data(), buffer.size()) == nullptr && errno == ENOENT;
}

// After the launcher exits, how long its output may take to arrive: its group is dead by then,
// so only a process that left the group can hold a pipe open this long.
constexpr milliseconds k_drain_limit{2000};

// Waits for the launcher, forwarding signals, passing its output on (when captured) and
// enforcing the watchdogs, until it exits; fills in everything but the timings of the spawn.
void supervise(pid_t launcher, const ProcessOptions& options, const sigset_t& ignored,
               OutputPump* pump, StdinRelay* relay, RunOutcome& outcome) {
  SignalFd signal_fd(supervised_signals(ignored));
  SignalForwarder forwarder(launcher, options.grace);
  Watchdogs watchdogs(options);
  WalltimeWarner warner(options.warning, options.signal_ranks);
  PartsWatch parts(launcher, options.launcher_parts);
  int part_signal = 0;
  const Clock::time_point started = Clock::now();
  while (true) {
    std::vector<pollfd> fds{{signal_fd.fd(), POLLIN, 0}};
    if (pump) pump->watch(fds);
    if (relay) relay->watch(fds);
    milliseconds budget = warner.until_due(watchdogs.until_due(forwarder.wait_budget()));
    if (auto due = pump ? pump->due_in() : std::nullopt) budget = std::min(budget, *due);
    if (::poll(fds.data(), fds.size(), static_cast<int>(budget.count())) > 0) {
      for (int sig : signal_fd.take()) {
        if (sig == SIGQUIT && options.take_stacks) {
          options.take_stacks(options.output_record_path);
        } else if (sig != SIGCHLD) {
          forwarder.handle(sig);
        }
      }
      if (relay) relay->transfer(fds);
      if (pump && pump->transfer(fds) > 0) {
        watchdogs.saw_output();
        if (!outcome.to_first_output && pump->output_seen()) {
          outcome.to_first_output =
              std::chrono::duration_cast<milliseconds>(Clock::now() - started);
        }
        if (pump->rank_failure()) watchdogs.saw_rank_failure(pump->rank_failure()->line);
        if (pump->tripped_line() && outcome.watchdog == Watchdog::none &&
            forwarder.stop(
                fmt::format("a failed node in the output (\"{}\")", *pump->tripped_line()))) {
          outcome.watchdog = Watchdog::signature;
        }
        // As a pipeline's writer dies of SIGPIPE when its reader goes (`| head`): the job's
        // output has nowhere to go, and recording it on would only fill the disk.
        if (pump->stdout_closed() && outcome.watchdog == Watchdog::none &&
            forwarder.stop("ezpz's standard output was closed by its reader")) {
          outcome.watchdog = Watchdog::stdout_closed;
        }
      }
    }
    if (pump) pump->tick();
    if (auto status = reap_if_exited(launcher)) {
      if (pump) pump->drain(Clock::now() + k_drain_limit);
      outcome.exit_code =
          part_signal ? 128 + part_signal : exit_code_of(*status, forwarder.stop_signal());
      outcome.launcher_signal = part_signal            ? part_signal
                                : WIFSIGNALED(*status) ? WTERMSIG(*status)
                                                       : 0;
      // The launcher's end after a rank's failure was ezpz's doing: no launcher died.
      if (outcome.watchdog == Watchdog::rank_failed) outcome.launcher_signal = 0;
      outcome.forwarded_signal = forwarder.user_signal();
      if (pump && pump->rank_failure() && outcome.forwarded_signal == 0) {
        outcome.failed_rank_status = pump->rank_failure()->status;
      }
      outcome.sent = forwarder.sent();
      outcome.cwd_missing = cwd_missing();
      return;
    }
    if (auto limit = watchdogs.due(); limit && outcome.watchdog == Watchdog::none) {
      // What the hung ranks were doing, while they still are (README: Stacks of hung ranks).
      if (limit->first == Watchdog::idle && options.take_stacks) {
        options.take_stacks(options.output_record_path);
      }
      if (forwarder.stop(limit->second)) outcome.watchdog = limit->first;
    }
    if (auto part = parts.killed(); part && outcome.watchdog == Watchdog::none) {
      const std::string who = fmt::format("{} (pid {})", part->name, part->pid);
      if (forwarder.stop(fmt::format("the launcher's {} died of signal {}", who, part->signal))) {
        outcome.launcher_part = who;
        part_signal = part->signal;
      }
    }
    if (forwarder.stop_signal() == 0) {
      if (auto words = warner.send_if_due(launcher)) {
        outcome.warning = std::move(*words);
        forwarder.note(options.warning->spec.signal, "warning");
      }
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

Env launcher_environment(const Env& base, const EnvList& overrides) {
  Env env = base;
  for (const auto& [name, value] : overrides) env.insert_or_assign(name, value);
  return env;
}

ProcessExecutor::ProcessExecutor(Env base, ProcessOptions options)
    : base_(std::move(base)), options_(options) {}

// Signals are blocked in the calling thread only; ezpz is single-threaded, and a caller with
// other threads must block the supervised signals in them too, or they may take the signals.
RunOutcome ProcessExecutor::run_for_outcome(const LaunchPlan& plan) {
  if (plan.argv.empty()) throw Error("launch plan: no launcher to run", ExitCode::failure);
  if (options_.capture_output && !options_.stdout_path.empty()) {
    throw Error("executor: capture_output and stdout_path cannot be combined", ExitCode::failure);
  }
  const Clock::time_point started = Clock::now();
  const auto started_wall = std::chrono::system_clock::now().time_since_epoch();
  std::optional<StdinRelay> relay;
  if (plan.relay_stdin) relay.emplace(stdin_may_carry_data());
  Env env = launcher_environment(base_, plan.env);
  if (relay) env.insert_or_assign(k_stdin_socket_variable, relay->socket_path());
  const std::string path = resolve_launcher(plan.argv.front(), env);
  // Only once the launcher is known to exist: a failed launch leaves nothing behind.
  write_files(plan.files);
  StdoutFile out(options_.stdout_path);
  std::optional<OutputPump> pump;
  if (options_.capture_output) {
    pump.emplace("", options_.tail_bytes, options_.output_record_limit, options_.console,
                 options_.output_record_floor);
    if (options_.stop_on_stderr_line) pump->watch_stderr_lines(options_.stop_on_stderr_line);
    pump->time_startup_from(
        std::chrono::duration_cast<std::chrono::nanoseconds>(started_wall).count());
    if (auto name = pump->listen_for_ranks()) {
      env.insert_or_assign(output::k_output_socket_variable, *name);
      if (options_.console == output::ConsoleMode::raw)  // no records: only the pipes passed
        env.insert_or_assign(output::k_records_variable, output::k_pipes_only);
    }
  }
  // Blocked before the fork, so no signal or SIGCHLD slips past the wait loop.
  ChildSetup setup{.ignored = inherited_ignored_signals(), .stdout_fd = out.fd()};
  SupervisedSignalScope signal_scope(setup.ignored);
  setup.ignore_sigpipe = signal_scope.sigpipe_was_ignored();
  if (pump) {
    setup.stdout_fd = pump->child_stdout();
    setup.stderr_fd = pump->child_stderr();
  }
  if (relay) setup.stdin_fd = relay->launcher_stdin();
  const pid_t launcher = spawn_launcher(path, plan, env, setup);
  if (pump) pump->close_child_ends();
  if (relay) relay->close_child_end();
  RunOutcome outcome;
  outcome.to_spawn = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  if (started_) started_();
  if (pump) pump->record_to(options_.output_record_path);
  supervise(launcher, options_, setup.ignored, pump ? &*pump : nullptr, relay ? &*relay : nullptr,
            outcome);
  outcome.total = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  if (pump) outcome.output_tail = pump->tail();
  if (pump) outcome.startup = pump->startup();
  if (pump) outcome.launcher_tail = pump->launcher_tail();
  return outcome;
}

}  // namespace ezpz::sys
