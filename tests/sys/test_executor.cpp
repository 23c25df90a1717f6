// lib/ezpz/sys/executor.cpp against real processes and real signals: no mocks. Every scratch
// file lives in a fresh mkdtemp directory.
#include "ezpz/output/rank_index.hpp"
#include "ezpz/sys/executor.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::Env;
using ezpz::Error;
using ezpz::ExitCode;
using ezpz::testing::read_text_file;
using ezpz::testing::TempDir;
using ezpz::LaunchPlan;
using ezpz::sys::ProcessExecutor;
using ezpz::sys::ProcessOptions;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {



// The contents of `path` once a whole line has been written to it, or nullopt after 5 s.
std::optional<std::string> wait_for_line(const std::string& path) {
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    std::string contents = read_text_file(path);
    if (!contents.empty() && contents.back() == '\n') return contents;
    std::this_thread::sleep_for(10ms);
  }
  return std::nullopt;
}

// True once `pid` no longer runs. A zombie counts as gone: whether it is reaped depends on who
// inherited it (pid 1 or a subreaper), not on ezpz.
bool process_gone(pid_t pid) {
  const auto deadline = Clock::now() + 1s;
  while (Clock::now() < deadline) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::string stat = read_text_file(fmt::format("/proc/{}/stat", pid));
    auto paren = stat.rfind(')');
    if (paren != std::string::npos && stat.compare(paren, 3, ") Z") == 0) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

Env base_env() {
  const char* path = std::getenv("PATH");
  return Env{{"PATH", path != nullptr ? path : "/usr/bin:/bin"}};
}

LaunchPlan shell(const std::string& script, std::vector<std::string> args = {}) {
  LaunchPlan plan{{"sh", "-c", script, "sh"}, {}, {}};
  plan.argv.insert(plan.argv.end(), args.begin(), args.end());
  return plan;
}

Error error_from(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error;
  }
  FAIL("no ezpz::Error was thrown");
  throw std::logic_error("unreachable");
}

// Blocks `signals` in the calling thread for its lifetime. Threads started meanwhile inherit the
// mask, so a signal sent to the whole process can only be taken by run()'s sigtimedwait.
class BlockedSignals {
 public:
  explicit BlockedSignals(const std::vector<int>& signals) {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : signals) sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &saved_);
  }
  ~BlockedSignals() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

 private:
  sigset_t saved_{};
};

// Sends `signals` to this very process (as a user's Ctrl-C or a scheduler's scancel reaches
// ezpz) once the launcher has written its ready line, `gap` apart.
class SignalSender {
 public:
  SignalSender(std::string ready_file, std::vector<int> signals, std::chrono::milliseconds gap)
      : blocked_(signals), thread_([=] {
          wait_for_line(ready_file);
          for (int sig : signals) {
            ::kill(::getpid(), sig);
            std::this_thread::sleep_for(gap);
          }
        }) {}
  ~SignalSender() { thread_.join(); }

 private:
  BlockedSignals blocked_;  // declared first: the thread must start with the mask in place
  std::thread thread_;
};

// Puts `fd` on this process's `target` descriptor (stdin, stdout, stderr) for its lifetime;
// -1 closes it.
class FdSwap {
 public:
  FdSwap(int target, int fd) : target_(target), saved_(::dup(target)) {
    if (fd >= 0) {
      ::dup2(fd, target);
    } else {
      ::close(target);
    }
  }
  ~FdSwap() {
    ::dup2(saved_, target_);
    ::close(saved_);
  }
  FdSwap(const FdSwap&) = delete;
  FdSwap& operator=(const FdSwap&) = delete;

 private:
  int target_;
  int saved_;
};

// A pseudo-terminal's slave end, open for its lifetime.
struct Terminal {
  Terminal() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    fd = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
    REQUIRE(fd >= 0);
  }
  ~Terminal() {
    ::close(fd);
    ::close(master);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;
  int master = -1;
  int fd = -1;
};

// A file in `dir` put on `target` for its lifetime: what ezpz passes on to its own stdout or
// stderr lands there.
class CapturedFd {
 public:
  CapturedFd(const TempDir& dir, const std::string& name, int target)
      : path_(dir.file(name)),
        fd_(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)),
        swap_(target, fd_) {}
  ~CapturedFd() { ::close(fd_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_;
  FdSwap swap_;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

TEST_CASE("the launcher's exit code is returned", "[executor]") {
  ProcessExecutor executor(base_env());
  CHECK(executor.run(LaunchPlan{{"/bin/sh", "-c", "exit 3"}, {}, {}}) == 3);
  CHECK(executor.run(LaunchPlan{{"true"}, {}, {}}) == 0);
}

TEST_CASE("a launcher killed by signal N gives 128+N", "[executor]") {
  ProcessExecutor executor(base_env());
  CHECK(executor.run(shell("kill -TERM $$")) == 143);
}

TEST_CASE("the launcher gets exactly the base env plus the plan's env", "[executor]") {
  TempDir dir;
  Env base = base_env();
  base["FOO"] = "from-base";
  base["KEPT"] = "yes";
  ProcessExecutor executor(base);
  LaunchPlan plan =
      shell(R"(test "$FOO" = bar && test -z "$HOME" && env > "$1")", {dir.file("env")});
  plan.env = {{"FOO", "bar"}, {"EXTRA", "a b=c"}};
  REQUIRE(executor.run(plan) == 0);

  std::vector<std::string> lines;
  std::istringstream env_dump(read_text_file(dir.file("env")));
  for (std::string line; std::getline(env_dump, line);) {
    if (line.rfind("PWD=", 0) != 0) lines.push_back(line);  // dash exports PWD itself
  }
  std::sort(lines.begin(), lines.end());
  CHECK(lines ==
        std::vector<std::string>{"EXTRA=a b=c", "FOO=bar", "KEPT=yes", "PATH=" + base.at("PATH")});
}

TEST_CASE("argv reaches the launcher literally, through no shell", "[executor]") {
  TempDir dir;
  const std::string marker = dir.file("executed");
  const std::vector<std::string> args = {
      "$(touch " + marker + ")", "`touch " + marker + "`", "two words", "", "*",
      "; touch " + marker};
  LaunchPlan plan = shell(R"(out=$1; shift; printf '%s\n' "$@" > "$out")", {dir.file("argv")});
  plan.argv.insert(plan.argv.end(), args.begin(), args.end());
  REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);

  std::string expected;
  for (const std::string& arg : args) expected += arg + "\n";
  CHECK(read_text_file(dir.file("argv")) == expected);
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("argv[0] is passed as given, not as the path it was found at", "[executor]") {
  TempDir dir;
  LaunchPlan plan = shell(R"(tr '\0' '\n' < /proc/$$/cmdline > "$1")", {dir.file("cmdline")});
  REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
  CHECK(read_text_file(dir.file("cmdline")).rfind("sh\n-c\n", 0) == 0);
}

TEST_CASE("the launcher is looked up on the PATH it will run with", "[executor]") {
  SECTION("the plan's PATH wins over the base PATH") {
    ProcessExecutor executor(Env{{"PATH", "/nonexistent"}});
    LaunchPlan plan = shell("exit 5");
    plan.env = {{"PATH", base_env().at("PATH")}};
    CHECK(executor.run(plan) == 5);
  }
  SECTION("a launcher missing from that PATH is an error, with nothing run") {
    ProcessExecutor executor(base_env());
    LaunchPlan plan = shell("exit 0");
    plan.env = {{"PATH", "/nonexistent"}};
    Error error = error_from([&] { executor.run(plan); });
    CHECK(std::string(error.what()) == "sh: launcher not found on PATH");
    CHECK(error.code() == ExitCode::not_found);
  }
}

TEST_CASE("a missing launcher is a not_found error", "[executor]") {
  ProcessExecutor executor(base_env());
  Error error = error_from([&] { executor.run(LaunchPlan{{"ezpz-no-such-launcher"}, {}, {}}); });
  CHECK(std::string(error.what()) == "ezpz-no-such-launcher: launcher not found on PATH");
  CHECK(error.code() == ExitCode::not_found);
}

TEST_CASE("a launcher given by path must be an executable file", "[executor]") {
  TempDir dir;
  ProcessExecutor executor(base_env());
  const std::string script = dir.file("launcher");
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";

  SECTION("not executable") {
    Error error = error_from([&] { executor.run(LaunchPlan{{script}, {}, {}}); });
    CHECK(std::string(error.what()) == script + ": launcher not found or not executable");
    CHECK(error.code() == ExitCode::not_found);
  }
  SECTION("executable, but execve refuses it") {
    std::ofstream(script) << "not a program\n";
    fs::permissions(script, fs::perms::owner_all);
    Error error = error_from([&] { executor.run(LaunchPlan{{script}, {}, {}}); });
    CHECK(std::string(error.what()) ==
          fmt::format("{0}: cannot execute {0}: {1}", script, std::strerror(ENOEXEC)));
    CHECK(error.code() == ExitCode::not_found);
  }
}

TEST_CASE("the launcher leads its own process group", "[executor]") {
  TempDir dir;
  REQUIRE(
      ProcessExecutor(base_env()).run(shell(R"(cat /proc/$$/stat > "$1")", {dir.file("stat")})) ==
      0);
  // /proc/PID/stat: "pid (comm) state ppid pgrp ..."
  std::string stat = read_text_file(dir.file("stat"));
  std::istringstream after_comm(stat.substr(stat.rfind(')') + 1));
  std::string state;
  pid_t parent = 0, group = 0;
  after_comm >> state >> parent >> group;
  CHECK(group == std::stoi(stat));
  CHECK(group != ::getpgrp());
  CHECK(parent == ::getpid());
}

TEST_CASE("with a stdin relay, the launcher's stdin is a pipe that neither has data nor ends",
          "[executor]") {
  TempDir dir;
  LaunchPlan plan = shell(R"(readlink /proc/$$/fd/0 > "$1"; echo "$EZPZ_STDIN" >> "$1"; )"
                          R"(grep -q " $EZPZ_STDIN\$" /proc/net/unix && echo listening >> "$1"; )"
                          R"(if timeout 0.3 cat; then echo ended >> "$1"; fi)",
                          {dir.file("stdin")});
  plan.relay_stdin = true;
  const std::string input = dir.file("input");
  std::ofstream(input) << "data\n";
  const int fd = ::open(input.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  {
    FdSwap swap(STDIN_FILENO, fd);
    REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
  }
  ::close(fd);
  std::istringstream lines(read_text_file(dir.file("stdin")));
  std::string kind, socket, state;
  std::getline(lines, kind);
  std::getline(lines, socket);
  std::getline(lines, state);
  CHECK(kind.starts_with("pipe:"));
  CHECK(socket.starts_with(fmt::format("@ezpz-stdin-{}-", ::getpid())));
  CHECK(state == "listening");
  CHECK(lines.peek() == EOF);  // `cat` saw neither data nor an end: timeout stopped it
  // Closed once the launcher exited.
  CHECK(read_text_file("/proc/net/unix").find(" " + socket + "\n") == std::string::npos);
}

// Hydra given /dev/null spins on the EOF and never ends a rank's stdin (stdin_relay.hpp): the
// launcher's stdin is the pipe all the same, and rankenv gives rank 0 /dev/null.
TEST_CASE("a stdin with nothing for rank 0: the launcher's pipe, no socket, EZPZ_STDIN=/dev/null",
          "[executor]") {
  TempDir dir;
  LaunchPlan plan = shell(fmt::format(R"(readlink /proc/$$/fd/0 | cut -d: -f1 > "$1"; )"
                                      R"(echo "[$EZPZ_STDIN]" >> "$1"; )"
                                      R"(grep -c " @ezpz-stdin-{}-" /proc/net/unix >> "$1"; )"
                                      R"(if timeout 0.3 cat; then echo ended >> "$1"; fi)",
                                      ::getpid()),
                          {dir.file("stdin")});
  plan.relay_stdin = true;
  SECTION("/dev/null") {
    const int null = ::open("/dev/null", O_RDONLY);
    REQUIRE(null >= 0);
    {
      FdSwap swap(STDIN_FILENO, null);
      REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
    }
    ::close(null);
  }
  SECTION("no stdin at all (closed)") {
    FdSwap swap(STDIN_FILENO, -1);
    REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
  }
  SECTION("a terminal") {
    Terminal terminal;
    FdSwap swap(STDIN_FILENO, terminal.fd);
    REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
  }
  CHECK(read_text_file(dir.file("stdin")) == "pipe\n[/dev/null]\n0\n");
}

TEST_CASE("stdin is inherited, unless it is a terminal", "[executor]") {
  TempDir dir;
  LaunchPlan plan = shell(R"(readlink /proc/$$/fd/0 > "$1")", {dir.file("stdin")});
  SECTION("a file on stdin reaches the launcher") {
    const std::string input = dir.file("input");
    std::ofstream(input) << "data\n";
    const int fd = ::open(input.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    {
      FdSwap swap(STDIN_FILENO, fd);
      REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
    }
    ::close(fd);
    CHECK(read_text_file(dir.file("stdin")) == input + "\n");
  }
  SECTION("a terminal on stdin is replaced by /dev/null") {
    Terminal terminal;
    {
      FdSwap swap(STDIN_FILENO, terminal.fd);
      REQUIRE(::isatty(STDIN_FILENO));
      REQUIRE(ProcessExecutor(base_env()).run(plan) == 0);
    }
    CHECK(read_text_file(dir.file("stdin")) == "/dev/null\n");
  }
}

TEST_CASE("whatever the launcher leaves in its group is killed when it exits", "[executor]") {
  TempDir dir;
  const std::string pid_file = dir.file("leftover");
  REQUIRE(ProcessExecutor(base_env()).run(shell(R"(sleep 30 & echo $! > "$1")", {pid_file})) == 0);
  auto leftover = wait_for_line(pid_file);
  REQUIRE(leftover);
  CHECK(process_gone(std::stoi(*leftover)));
}

TEST_CASE("the launcher starts with no blocked signals, and nohup's SIGHUP still ignored",
          "[executor]") {
  TempDir dir;
  BlockedSignals blocked({SIGINT, SIGUSR1, SIGTERM});
  struct sigaction ignore {
  }, saved{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGHUP, &ignore, &saved);  // as `nohup ezpz launch ...` starts
  // cp itself is the launcher, copying its own status: a shell would reset its mask on its own.
  const int code = ProcessExecutor(base_env())
                       .run(LaunchPlan{{"cp", "/proc/self/status", dir.file("status")}, {}, {}});
  sigaction(SIGHUP, &saved, nullptr);
  REQUIRE(code == 0);
  std::istringstream status(read_text_file(dir.file("status")));
  std::string masks;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigIgn:", 0) == 0) masks += line + "\n";
  }
  // Bit 0 of SigIgn is signal 1, SIGHUP.
  CHECK(masks == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000001\n");
}

TEST_CASE("run() restores the caller's signal mask", "[executor]") {
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  REQUIRE(ProcessExecutor(base_env()).run(shell("exit 0")) == 0);
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD}) {
    CHECK(sigismember(&before, sig) == sigismember(&after, sig));
  }
}

TEST_CASE("SIGTERM to ezpz reaches the launcher's whole group", "[executor]") {
  TempDir dir;
  const std::string ready = dir.file("grandchild");
  // The launcher starts a grandchild in its group, reports its pid, then waits.
  LaunchPlan plan = shell(R"(sleep 30 & echo $! > "$1"; sleep 30)", {ready});
  const auto start = Clock::now();
  int code = -1;
  {
    SignalSender sender(ready, {SIGTERM}, 0ms);
    code = ProcessExecutor(base_env()).run(plan);
  }
  CHECK(code == 143);
  CHECK(seconds_since(start) < 2.0);
  auto grandchild = wait_for_line(ready);
  REQUIRE(grandchild);
  CHECK(process_gone(std::stoi(*grandchild)));
}

TEST_CASE("a launcher that exits 0 after a forwarded SIGTERM still reports 143", "[executor]") {
  TempDir dir;
  const std::string ready = dir.file("ready");
  // As Hydra sometimes does: asked to stop, it cleans up and exits 0.
  LaunchPlan plan = shell(R"(trap 'exit 0' TERM; echo ready > "$1"; sleep 30 & wait)", {ready});
  int code = -1;
  {
    SignalSender sender(ready, {SIGTERM}, 0ms);
    code = ProcessExecutor(base_env()).run(plan);
  }
  CHECK(code == 143);
}

TEST_CASE("a launcher that ignores SIGTERM is killed after the grace period", "[executor]") {
  TempDir dir;
  const std::string ready = dir.file("ready");
  LaunchPlan plan = shell(R"(trap '' TERM; echo ready > "$1"; sleep 30)", {ready});
  const auto start = Clock::now();
  int code = -1;
  {
    SignalSender sender(ready, {SIGTERM}, 0ms);
    code = ProcessExecutor(base_env(), ProcessOptions{300ms}).run(plan);
  }
  CHECK(code == 137);
  CHECK(seconds_since(start) >= 0.3);
  CHECK(seconds_since(start) < 2.0);
}

TEST_CASE("a second SIGTERM kills the launcher at once", "[executor]") {
  TempDir dir;
  const std::string ready = dir.file("ready");
  LaunchPlan plan = shell(R"(trap '' TERM; echo ready > "$1"; sleep 30)", {ready});
  const auto start = Clock::now();
  int code = -1;
  {
    SignalSender sender(ready, {SIGTERM, SIGTERM}, 200ms);
    code = ProcessExecutor(base_env(), ProcessOptions{10s}).run(plan);
  }
  CHECK(code == 137);
  CHECK(seconds_since(start) < 2.0);
}

// --- Output capture: --idle-timeout, the run record, the outcome's tail ---------------------

ProcessOptions capturing(const std::string& record = "") {
  ProcessOptions options;
  options.grace = 500ms;
  options.capture_output = true;
  options.output_record_path = record;
  return options;
}

// Captured into DIR/output.log, the ranks' records shown in `mode`.
ProcessOptions capturing_records(const TempDir& dir, ezpz::output::ConsoleMode mode) {
  ProcessOptions options = capturing(dir.file("output.log"));
  options.console = mode;
  return options;
}

// A captured run with ezpz's own stdout and stderr in files: what it passed on, and the outcome.
struct CapturedRun {
  ezpz::sys::RunOutcome outcome;
  std::string out;
  std::string err;
};

CapturedRun run_captured(const TempDir& dir, const ProcessOptions& options,
                         const std::string& script) {
  CapturedFd out_file(dir, "out", STDOUT_FILENO);
  CapturedFd err_file(dir, "err", STDERR_FILENO);
  CapturedRun run;
  run.outcome = ProcessExecutor(base_env(), options).run_for_outcome(shell(script));
  run.out = read_text_file(out_file.path());
  run.err = read_text_file(err_file.path());
  return run;
}

TEST_CASE("captured output still reaches ezpz's stdout and stderr, and the record holds both",
          "[executor][capture]") {
  TempDir dir;
  const std::string record = dir.file("output.log");
  ezpz::sys::RunOutcome outcome;
  std::string out;
  std::string err;
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    outcome = ProcessExecutor(base_env(), capturing(record))
                  .run_for_outcome(shell("echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three"));
    out = read_text_file(out_file.path());
    err = read_text_file(err_file.path());
  }
  CHECK(outcome.exit_code == 0);
  CHECK(out == "one\nthree\n");
  CHECK(err == "two\n");
  CHECK(read_text_file(record) == "one\ntwo\nthree\n");
  CHECK(outcome.output_tail == "one\ntwo\nthree\n");
  REQUIRE(outcome.to_first_output.has_value());
  CHECK(*outcome.to_first_output <= outcome.total);
  CHECK(outcome.watchdog == ezpz::Watchdog::none);
  const fs::perms owner_rw = fs::perms::owner_read | fs::perms::owner_write;
  CHECK((fs::status(record).permissions() & fs::perms::all) == owner_rw);
}

// Issue 18: with a console mode, rank records (as ezpz-rankenv writes them) are shown whole and
// labelled, the launcher's own lines as they came; output.log holds the console as shown,
// ranks.idx whose each line is, and the tail (the verdict's) the lines as the ranks
// wrote them, so failure reports still parse.
TEST_CASE("with a console mode, rank records are re-assembled, labelled and recorded per rank",
          "[executor][capture]") {
  TempDir dir;
  const ProcessOptions options = capturing_records(dir, ezpz::output::ConsoleMode::label);
  ezpz::sys::RunOutcome outcome;
  std::string out;
  std::string err;
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    outcome = ProcessExecutor(base_env(), options)
                  .run_for_outcome(
                      shell("printf '0: one\\n1+ tw\\n'; sleep 0.1; printf '1+ o\\n0: three\\n"
                            "1: \\n'; echo 'ezpz-rankenv: rank 1 exited' >&2"));
    out = read_text_file(out_file.path());
    err = read_text_file(err_file.path());
  }
  CHECK(outcome.exit_code == 0);
  CHECK(out == "[0] one\n[0] three\n[1] two\n");  // a line is shown once whole
  CHECK(err == "ezpz-rankenv: rank 1 exited\n");
  CHECK(read_text_file(dir.file("output.log")) == out + err);
  // Labelled, output.log has every rank's every line: ranks.idx says whose, no ranks.log.
  CHECK_FALSE(fs::exists(dir.file("ranks.log")));
  const std::string index = read_text_file(dir.file("ranks.idx"));
  CHECK(ezpz::output::indexed_rank_output(out + err, index, 0) == "one\nthree\n");
  CHECK(ezpz::output::indexed_rank_output(out + err, index, 1) == "two\n");
  CHECK(outcome.output_tail == "one\nthree\ntwo\nezpz-rankenv: rank 1 exited\n");
}

// Issue 18's throughput: the ranks on ezpz's host connect to the sockets named in
// EZPZ_OUTPUT_SOCKET (one per stream) and send their records there, past the launcher. Here a
// launcher that is a Python script plays two such ranks, cutting records anywhere between its
// writes, while its own pipe carries a line of its own in two pieces and a record of a rank on
// another host: each source is re-assembled apart, so no piece runs into another's. The
// report a rank's ezpz-rankenv sends after its lines is the launcher's (rank -1) as before.
// As root, a connection of another user is refused: its line is nowhere.
constexpr const char* k_direct_ranks = R"(if os.geteuid() == 0 and os.fork() == 0:
    os.setuid(65534)
    try:  # refused: ezpz may close the connection first
        connect("-out").sendall(b"0: intruder\n")
    finally:
        os._exit(0)
a, b, e = connect("-out"), connect("-out"), connect("-err")
def pipe(text):
    sys.stdout.write(text)
    sys.stdout.flush()
    time.sleep(0.05)
def send(sock, data):
    sock.sendall(data)
    time.sleep(0.05)
pipe("2: remote\n")
pipe("launcher ")
send(a, b"0: on")
send(b, b"1: two\n1+ x")
send(a, b"e\n0")
pipe("says\n")
send(b, b"y\n1: \n")
send(a, b": three\n")
e.sendall(b"1: err\nezpz-rankenv: rank 1 (pid 7) on n01: exited with code 3\n")
for s in (a, b, e):
    s.close()
)";

// A "launcher" that is the Python `script`, given `argument`, labelled and recorded; it can
// connect() to ezpz's socket for a stream ("-out", "-err").
CapturedRun run_python_launcher(const TempDir& dir, const std::string& script,
                                const std::string& argument = "",
                                ProcessOptions options = ProcessOptions()) {
  const std::string path = dir.file("ranks.py");
  std::ofstream(path) << R"(import os, socket, sys, time
name = os.environ["EZPZ_OUTPUT_SOCKET"]
def connect(suffix):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + name[1:] + suffix)
    return s
)" << script;
  if (!options.console) options = capturing_records(dir, ezpz::output::ConsoleMode::label);
  return run_captured(dir, options, fmt::format("exec python3 {} {}", path, argument));
}

TEST_CASE("ranks on ezpz's host send their records straight to it, each connection apart",
          "[executor][capture]") {
  TempDir dir;
  const CapturedRun run = run_python_launcher(dir, k_direct_ranks);
  CHECK(run.outcome.exit_code == 0);
  std::vector<std::string> shown;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) shown.push_back(line);
  std::sort(shown.begin(), shown.end());
  CHECK(shown == std::vector<std::string>{"[0] one", "[0] three", "[1] two", "[1] xy", "[2] remote",
                                          "launcher says"});
  CHECK(run.err == "[1] err\nezpz-rankenv: rank 1 (pid 7) on n01: exited with code 3\n");
  const std::string log = read_text_file(dir.file("output.log"));
  const std::string index = read_text_file(dir.file("ranks.idx"));
  CHECK(ezpz::output::indexed_rank_output(log, index, 0) == "one\nthree\n");
  CHECK(ezpz::output::indexed_rank_output(log, index, 1) == "two\nxy\nerr\n");
  CHECK(ezpz::output::indexed_rank_output(log, index, 2) == "remote\n");
  REQUIRE(run.outcome.failed_rank_status.has_value());
  CHECK(*run.outcome.failed_rank_status == 3);
}

// Faster still: ezpz-rankenv passes the rank's own pipes over (SCM_RIGHTS, after pipe_record())
// and ezpz reads the rank's bytes itself, cutting them into lines (pieces anywhere, a '\r'
// redraw, "\r\n" cut between writes, a stamp line). What the rank wrote comes before what its
// ezpz-rankenv says after it, here in the same instant. Refused, and answered so: a file passed
// as a pipe, a pipe passed without the record; neither's text shows.
constexpr const char* k_pass_pipe = R"(answers = []
def passed(suffix, record, fd):  # as ezpz-rankenv: lets go of the pipe once ezpz has it
    s = connect(suffix)
    socket.send_fds(s, [record], [fd])
    answers.append(s.recv(1).decode())
    if answers[-1] == "y":
        os.close(fd)
    return s
def rank_writes(w, chunks, e, err_line, err):  # as rank 4, then its ezpz-rankenv's report
    for chunk in chunks:
        os.write(w, chunk)
        time.sleep(0.05)
    os.write(e, err_line)
    os.close(w)
    os.close(e)
    err.sendall(b"ezpz-rankenv: rank 4 (pid 7) on n01: exited with code 3\n")
)";
constexpr const char* k_passed_pipes = R"(r, w = os.pipe()
out = passed("-out", b"4! pipe\n", r)
r, e = os.pipe()
err = passed("-err", b"4! pipe\n", r)
file = os.open(sys.argv[1], os.O_RDONLY)
not_a_pipe = passed("-out", b"5! pipe\n", file)
r, unsaid = os.pipe()
no_record = passed("-out", b"6! exec 1 n01\n", r)
os.write(unsaid, b"never shown\n")
print("answers", *answers, flush=True)
time.sleep(0.05)
rank_writes(w, (b"one\ntw", b"o\nEZPZ_STAMP ready\n", b"bar 50%\r", b"bar 100%\r", b"\nthree\n"),
            e, b"err line\n", err)
for s in (out, err, not_a_pipe, no_record):
    s.close()
)";

TEST_CASE("ranks on ezpz's host pass it their own pipes, whose lines it cuts itself",
          "[executor][capture]") {
  TempDir dir;
  const std::string secret = dir.file("secret");
  std::ofstream(secret) << "5: not a pipe\n";
  const CapturedRun run =
      run_python_launcher(dir, std::string(k_pass_pipe) + k_passed_pipes, secret);
  CHECK(run.outcome.exit_code == 0);
  CHECK(run.out == "answers y y n n\n[4] one\n[4] two\n[4] bar 50%\n[4] bar 100%\n[4] three\n");
  CHECK(run.err == "[4] err line\nezpz-rankenv: rank 4 (pid 7) on n01: exited with code 3\n");
  const std::string log = read_text_file(dir.file("output.log"));
  CHECK(ezpz::output::indexed_rank_output(log, read_text_file(dir.file("ranks.idx")), 4) ==
        "one\ntwo\nbar 50%\rbar 100%\r\nthree\nerr line\n");
  std::vector<std::string> phases;
  for (const ezpz::output::Stamp& stamp : run.outcome.startup) {
    phases.push_back(fmt::format("{} {}", stamp.rank, stamp.phase));
  }
  std::sort(phases.begin(), phases.end());  // the connections' order is the kernel's
  // Refused with its pipe, the record without a pipe's is taken as any other.
  CHECK(phases == std::vector<std::string>{"4 first_output", "4 ready", "6 exec"});
  REQUIRE(run.outcome.failed_rank_status.has_value());
  CHECK(*run.outcome.failed_rank_status == 3);
}

// A passed pipe's reads hold thousands of whole lines: the console takes them in runs
// (LineCutter's put_lines, the pump's take_lines). Each is still labelled and indexed, a stamp
// among them is taken out, and the tail is the end of the lines as the rank wrote them, from
// the start of a line.
constexpr const char* k_passed_runs = R"(r, w = os.pipe()
out = passed("-out", b"4! pipe\n", r)
numbers = lambda first, last: b"".join(b"%d\n" % i for i in range(first, last + 1))
os.write(w, numbers(1, 50000) + b"EZPZ_STAMP ready\n" + numbers(50001, 100000))
os.close(w)
out.close()
)";

// With one rank, de-duplication joins nothing and shows every line as labelling does.
TEST_CASE("a passed pipe's runs of whole lines are labelled, indexed and kept for the tail",
          "[executor][capture]") {
  std::string expected;
  std::string wrote;
  for (int i = 1; i <= 100000; ++i) {
    expected += fmt::format("[4] {}\n", i);
    wrote += fmt::format("{}\n", i);
  }
  for (const auto mode : {ezpz::output::ConsoleMode::label, ezpz::output::ConsoleMode::dedup}) {
    INFO(ezpz::output::console_mode_name(mode));
    TempDir dir;
    ProcessOptions options = capturing_records(dir, mode);
    options.tail_bytes = 1000;
    const CapturedRun run =
        run_python_launcher(dir, std::string(k_pass_pipe) + k_passed_runs, "", options);
    CHECK(run.out == expected);
    const std::string log = read_text_file(dir.file("output.log"));
    CHECK(log == expected);
    CHECK(ezpz::output::indexed_rank_output(log, read_text_file(dir.file("ranks.idx")), 4) ==
          wrote);
    const std::string& tail = run.outcome.output_tail;
    CHECK(tail.size() >= 1000);
    CHECK(tail.size() <= 2000);
    CHECK(wrote.ends_with(tail));
    CHECK((tail.size() == wrote.size() || wrote[wrote.size() - tail.size() - 1] == '\n'));
    std::vector<std::string> phases;
    for (const ezpz::output::Stamp& stamp : run.outcome.startup) phases.push_back(stamp.phase);
    std::sort(phases.begin(), phases.end());
    CHECK(phases == std::vector<std::string>{"first_output", "ready"});
  }
}

// `--output raw`: ezpz-rankenv passes the pipes before the rank starts (EZPZ_OUTPUT_RECORDS=pipes)
// and ezpz passes the rank's bytes on as they come, past the launcher: unlabelled, nothing cut
// or held back (a '\r' redraw, a stamp's line, a line with no end), into output.log and the tail
// with the launcher's own. The connection carries ezpz-rankenv's report, after the rank's bytes.
// A rank's own "ssh: ..." line is no launcher's report of a node: the watcher never sees it.
constexpr const char* k_raw_pipes = R"(r, w = os.pipe()
out = passed("-out", b"4! pipe\n", r)
r, e = os.pipe()
err = passed("-err", b"4! pipe\n", r)
print("answers", *answers, flush=True)
time.sleep(0.05)
rank_writes(w, (b"one\ntw", b"o\nEZPZ_STAMP ready\n", b"bar 50%\r", b"bar 100%\r\n", b"no end"),
            e, b"ssh: connect to host n01 port 22: Connection refused\n", err)
for s in (out, err):
    s.close()
)";

TEST_CASE("with a raw console, the ranks' passed pipes are passed on as bytes, as they come",
          "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing_records(dir, ezpz::output::ConsoleMode::raw);
  options.stop_on_stderr_line = [](std::string_view line) { return line.starts_with("ssh: "); };
  const CapturedRun run =
      run_python_launcher(dir, std::string(k_pass_pipe) + k_raw_pipes, "", options);
  CHECK(run.outcome.exit_code == 0);
  CHECK(run.outcome.watchdog == ezpz::Watchdog::none);
  const std::string out = "answers y y\none\ntwo\nEZPZ_STAMP ready\nbar 50%\rbar 100%\r\nno end";
  const std::string err =
      "ssh: connect to host n01 port 22: Connection refused\n"
      "ezpz-rankenv: rank 4 (pid 7) on n01: exited with code 3\n";
  CHECK(run.out == out);
  CHECK(run.err == err);
  CHECK(read_text_file(dir.file("output.log")) == out + err);
  CHECK(run.outcome.output_tail == out + err);
  CHECK(!fs::exists(dir.file("ranks.idx")));
  CHECK(!fs::exists(dir.file("ranks.log")));
  CHECK(run.outcome.startup.empty());
  CHECK(!run.outcome.launcher_tail.has_value());  // a rank on another host: the launcher's bytes
  REQUIRE(run.outcome.failed_rank_status.has_value());
  CHECK(*run.outcome.failed_rank_status == 3);
}

// Where the console does not show every rank's line (rank0, dedup), ranks.log keeps them all.
TEST_CASE("with rank0 on the console, ranks.log keeps every rank's lines as records",
          "[executor][capture]") {
  TempDir dir;
  const ProcessOptions options = capturing_records(dir, ezpz::output::ConsoleMode::rank0);
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    ProcessExecutor(base_env(), options)
        .run_for_outcome(
            shell("printf '0: one\\n1+ tw\\n'; sleep 0.1; printf '1+ o\\n0: three\\n1: \\n'"));
    CHECK(read_text_file(out_file.path()) == "one\nthree\n");
  }
  CHECK(read_text_file(dir.file("ranks.log")) == "0: one\n0: three\n1: two\n");
  CHECK_FALSE(fs::exists(dir.file("ranks.idx")));
}

// The outcome of `command` run with a tail of 1,000 bytes; its console (stdout) must be larger
// than `console_at_least`.
ezpz::sys::RunOutcome long_output_outcome(const TempDir& dir, ProcessOptions options,
                                          const std::string& command,
                                          std::uintmax_t console_at_least) {
  options.tail_bytes = 1000;
  CapturedFd out_file(dir, "out", STDOUT_FILENO);
  ezpz::sys::RunOutcome outcome =
      ProcessExecutor(base_env(), options).run_for_outcome(shell(command));
  CHECK(fs::file_size(out_file.path()) > console_at_least);
  return outcome;
}

TEST_CASE("the outcome keeps the end of a long output", "[executor][capture]") {
  TempDir dir;
  const std::string tail =
      long_output_outcome(dir, capturing(), "seq 1 100000; echo the-end", 500000).output_tail;
  CHECK(tail.size() >= 1000);
  CHECK(tail.size() <= 2000);
  CHECK(tail.ends_with("99999\n100000\nthe-end\n"));
}

// With records, the tail is taken line by line from what the ranks wrote (no labels), and keeps
// at least its size: here 100,000 lines in reads of up to 1 MiB.
TEST_CASE("with records, the outcome keeps the end of the ranks' lines as they wrote them",
          "[executor][capture]") {
  TempDir dir;
  const std::string tail =
      long_output_outcome(dir, capturing_records(dir, ezpz::output::ConsoleMode::label),
                          "seq 1 100000 | sed 's/^/0: /'; echo '1: the-end'", 800000)
          .output_tail;
  CHECK(tail.size() >= 1000);
  CHECK(tail.size() <= 2000 + 8);
  CHECK(tail.ends_with("\n99999\n100000\nthe-end\n"));
  // Whole lines only: the first is a whole number, and the lines from it to 100000 are all there.
  const int first = std::stoi(tail.substr(0, tail.find('\n')));
  CHECK(first + static_cast<int>(std::count(tail.begin(), tail.end(), '\n')) - 2 == 100000);
}

TEST_CASE("a launcher silent for the idle timeout is stopped, and the outcome says so",
          "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.idle_timeout = 400ms;
  const std::string pid_file = dir.file("pid");
  const auto start = Clock::now();
  ezpz::sys::RunOutcome outcome;
  std::string err;
  {
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    // Ticks at 0, 0.3 and 0.6 s keep it alive past the 0.4 s limit; then silence.
    outcome = ProcessExecutor(base_env(), options)
                  .run_for_outcome(shell(R"(echo $$ > "$1"; for i in 1 2 3; do echo tick; sleep 0.3; done; sleep 30)",
                                         {pid_file}));
    err = read_text_file(err_file.path());
  }
  CHECK(outcome.watchdog == ezpz::Watchdog::idle);
  CHECK(outcome.exit_code == 143);
  CHECK(outcome.forwarded_signal == 0);
  CHECK(seconds_since(start) >= 0.6 + 0.4);  // the last tick, then the idle limit
  CHECK(seconds_since(start) < 5.0);
  CHECK(err == "ezpz: no output for 400 ms; sending SIGTERM to the launcher\n");
  CHECK(process_gone(std::stoi(read_text_file(pid_file))));
}

TEST_CASE("the idle timeout takes the stacks first, while the launcher still runs",
          "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.idle_timeout = 300ms;
  options.output_record_path = dir.file("output.log");
  const std::string pid_file = dir.file("pid");
  std::vector<std::string> calls;
  options.take_stacks = [&](const std::string& record) {
    const int pid = std::stoi(read_text_file(pid_file));
    calls.push_back(record + (process_gone(pid) ? ": gone" : ": running"));
  };
  ezpz::sys::RunOutcome outcome;
  {
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    outcome = ProcessExecutor(base_env(), options)
                  .run_for_outcome(shell(R"(echo $$ > "$1"; sleep 30)", {pid_file}));
  }
  CHECK(outcome.watchdog == ezpz::Watchdog::idle);
  CHECK(calls == std::vector<std::string>{dir.file("output.log") + ": running"});
}

TEST_CASE("with a stacks hook, SIGQUIT takes the stacks and is not forwarded", "[executor]") {
  TempDir dir;
  ProcessOptions options = capturing();
  const std::string ready = dir.file("ready");
  int calls = 0;
  options.take_stacks = [&](const std::string&) { ++calls; };
  // The launcher would die of SIGQUIT (131) if it got it; it exits 0 when its sleep ends.
  LaunchPlan plan = shell(R"(echo ready > "$1"; sleep 1)", {ready});
  ezpz::sys::RunOutcome outcome;
  {
    SignalSender sender(ready, {SIGQUIT}, 0ms);
    outcome = ProcessExecutor(base_env(), options).run_for_outcome(plan);
  }
  CHECK(calls == 1);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.forwarded_signal == 0);
}

TEST_CASE("the wall-clock timeout fires even while output flows", "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.timeout = 500ms;
  options.idle_timeout = 400ms;
  ezpz::sys::RunOutcome outcome;
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    outcome = ProcessExecutor(base_env(), options)
                  .run_for_outcome(shell("while :; do echo busy; sleep 0.05; done"));
    CHECK(read_text_file(err_file.path()) ==
          "ezpz: time limit of 500 ms reached; sending SIGTERM to the launcher\n");
  }
  CHECK(outcome.watchdog == ezpz::Watchdog::timeout);
  CHECK(outcome.exit_code == 143);
}

TEST_CASE("a watchdog that ignores SIGTERM still ends in SIGKILL after the grace period",
          "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.idle_timeout = 300ms;
  ezpz::sys::RunOutcome outcome;
  const auto start = Clock::now();
  {
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    outcome = ProcessExecutor(base_env(), options).run_for_outcome(shell("trap '' TERM; sleep 30"));
  }
  CHECK(outcome.watchdog == ezpz::Watchdog::idle);
  CHECK(outcome.exit_code == 137);
  CHECK(seconds_since(start) < 3.0);
}

TEST_CASE("a closed stdout stops a captured job, as it stops a pipeline's writer",
          "[executor][capture]") {
  TempDir dir;
  std::array<int, 2> ends{};
  REQUIRE(::pipe(ends.data()) == 0);
  ::close(ends[0]);  // nobody reads: `ezpz launch ... | head` after head exited
  const std::string record = dir.file("output.log");
  ezpz::sys::RunOutcome outcome;
  std::string err;
  const auto start = Clock::now();
  {
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    FdSwap swap(STDOUT_FILENO, ends[1]);
    // Before, the job went on and its record grew without bound (`yes`: 10.9 GB in 30 s).
    outcome = ProcessExecutor(base_env(), capturing(record))
                  .run_for_outcome(shell("echo first; exec sleep 30"));
    err = read_text_file(err_file.path());
  }
  ::close(ends[1]);
  CHECK(seconds_since(start) < 10.0);
  CHECK(outcome.watchdog == ezpz::Watchdog::stdout_closed);
  CHECK(read_text_file(record) == "first\n");
  CHECK(
      err.starts_with("ezpz: ezpz's standard output was closed by its reader; sending SIGTERM to "
                      "the launcher\n"));
}

TEST_CASE("a failing stderr does not stop a captured job", "[executor][capture]") {
  TempDir dir;
  std::array<int, 2> ends{};
  REQUIRE(::pipe(ends.data()) == 0);
  ::close(ends[0]);
  const std::string record = dir.file("output.log");
  ezpz::sys::RunOutcome outcome;
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    FdSwap swap(STDERR_FILENO, ends[1]);
    outcome = ProcessExecutor(base_env(), capturing(record))
                  .run_for_outcome(shell("echo first >&2; sleep 0.2; echo second; exit 3"));
  }
  ::close(ends[1]);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.watchdog == ezpz::Watchdog::none);
  CHECK(read_text_file(record) == "first\nsecond\n");
}

TEST_CASE("the record stops at its limit with one line saying so; the console gets everything",
          "[executor][capture]") {
  TempDir dir;
  const std::string record = dir.file("output.log");
  ProcessOptions options = capturing(record);
  options.output_record_limit = 100000;
  options.tail_bytes = 1000;
  const auto [outcome, out, err] = run_captured(
      dir, options, "echo start >&2; sleep 0.2; seq 1 300000; sleep 0.2; echo the-end >&2");
  std::string expected;
  for (int i = 1; i <= 300000; ++i) expected += std::to_string(i) + "\n";
  CHECK(out == expected);
  const std::string note =
      "\n[ezpz: the record stops here: it reached --record-limit (100000 bytes); the rest of the "
      "output went only to the console]\n";
  const std::string recorded = read_text_file(record);
  CHECK(recorded.size() == 100000 + note.size());
  CHECK(recorded.starts_with("start\n1\n2\n"));
  CHECK(recorded.ends_with(note));
  CHECK(err ==
        "start\nezpz: the job's output reached --record-limit (100000 bytes); the rest is "
        "not recorded\nthe-end\n");
  // The verdict still reads the output's real end.
  CHECK(outcome.output_tail.ends_with("299999\n300000\nthe-end\n"));
}

TEST_CASE("a record that cannot be created is said once, and the job runs", "[executor][capture]") {
  TempDir dir;
  ezpz::sys::RunOutcome outcome;
  std::string err;
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    outcome = ProcessExecutor(base_env(), capturing(dir.file("missing/output.log")))
                  .run_for_outcome(shell("echo hi"));
    err = read_text_file(err_file.path());
  }
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.output_tail == "hi\n");
  CHECK(err == fmt::format("ezpz: warning: {}: No such file or directory; the job's output is not "
                           "recorded\n",
                           dir.file("missing/output.log")));
}

TEST_CASE("the launcher gets SIGPIPE's default action although ezpz ignores it meanwhile",
          "[executor][capture]") {
  TempDir dir;
  CapturedFd out_file(dir, "out", STDOUT_FILENO);
  // SigIgn in /proc/self/status: bit 13 (SIGPIPE) must be clear in the launcher.
  auto outcome = ProcessExecutor(base_env(), capturing())
                     .run_for_outcome(shell("grep SigIgn /proc/self/status"));
  const std::string line = outcome.output_tail;
  REQUIRE(line.starts_with("SigIgn:"));
  const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
  CHECK((mask & (1ULL << (SIGPIPE - 1))) == 0);
}

TEST_CASE("a line on stderr can stop the launcher at once", "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.stop_on_stderr_line = [](std::string_view line) { return line.starts_with("ssh: "); };
  ezpz::sys::RunOutcome outcome;
  std::string err;
  const auto start = Clock::now();
  {
    CapturedFd out_file(dir, "out", STDOUT_FILENO);
    CapturedFd err_file(dir, "err", STDERR_FILENO);
    // The report arrives in two writes, the second without its newline until later.
    outcome = ProcessExecutor(base_env(), options)
                  .run_for_outcome(shell("echo 'ssh: n03 ok' ; printf 'fine\\nssh: Could not' >&2; "
                                         "sleep 0.2; printf ' resolve n03\\n' >&2; sleep 30"));
    err = read_text_file(err_file.path());
  }
  CHECK(outcome.watchdog == ezpz::Watchdog::signature);  // stdout's "ssh:" line did not count
  CHECK(seconds_since(start) < 5.0);
  CHECK(err.ends_with("ezpz: a failed node in the output (\"ssh: Could not resolve n03\"); "
                      "sending SIGTERM to the launcher\n"));
}

TEST_CASE("a rank's failure stops a launcher that waits on, --kill-on-bad-exit later",
          "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.stop_after_rank_failure = std::chrono::milliseconds(300);
  // A rank's own line that looks like a report, on stdout, does not count; stderr's does.
  const auto [outcome, out, err] = run_captured(
      dir, options,
      "echo 'ezpz-rankenv: rank 0 (pid 1) on n01: exited with code 9'; "
      "echo 'ezpz-rankenv: rank 1 (pid 7304) on n02: killed by signal 11 (SIGSEGV)' >&2; "
      "sleep 30");
  CHECK(outcome.watchdog == ezpz::Watchdog::rank_failed);
  CHECK(outcome.exit_code == 128 + SIGTERM);  // the launcher's own: ezpz stopped it
  CHECK(outcome.failed_rank_status == std::optional<int>(128 + SIGSEGV));
  CHECK(outcome.launcher_signal == 0);  // its SIGTERM was ezpz's: no launcher died
  CHECK(err.ends_with(
      "ezpz: the job still ran 300 ms after \"ezpz-rankenv: rank 1 (pid 7304) on n02: killed by "
      "signal 11 (SIGSEGV)\" (--kill-on-bad-exit); sending SIGTERM to the launcher\n"));
}

TEST_CASE("a launcher that ends by itself after a rank's failure is not stopped",
          "[executor][capture]") {
  TempDir dir;
  ProcessOptions options = capturing();
  options.stop_after_rank_failure = std::chrono::milliseconds(60000);
  const auto [outcome, out, err] = run_captured(
      dir, options,
      "echo 'ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code 3' >&2; sleep 0.2; exit 3");
  CHECK(outcome.watchdog == ezpz::Watchdog::none);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.failed_rank_status == std::optional<int>(3));
  CHECK(err == "ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code 3\n");
}

TEST_CASE("with a record, bulk stdout is spliced and still arrives whole, in order, with its tail",
          "[executor][capture]") {
  TempDir dir;
  const std::string record = dir.file("output.log");
  ProcessOptions options = capturing(record);
  options.tail_bytes = 1000;
  // Two pipes have no order between them: ezpz passes on what each holds as it reads it, a
  // chunk at a time, so the record puts stderr's last line after stdout's only once stdout is
  // drained. The pause gives a loaded machine (CI's, while another build runs) time for that.
  const auto [outcome, out, err] = run_captured(
      dir, options,
      "seq 1 300000; echo middle >&2; seq 300001 400000; sleep 0.5; echo the-end >&2");
  std::string expected;
  for (int i = 1; i <= 400000; ++i) expected += std::to_string(i) + "\n";
  CHECK(out == expected);
  CHECK(err == "middle\nthe-end\n");
  const std::string recorded = read_text_file(record);
  CHECK(recorded.size() == expected.size() + err.size());
  CHECK(recorded.ends_with("399999\n400000\nthe-end\n"));
  CHECK(outcome.output_tail.size() == 1000);
  CHECK(outcome.output_tail.ends_with("400000\nthe-end\n"));
}
