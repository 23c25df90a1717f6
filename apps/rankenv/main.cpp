// ezpz-rankenv COMMAND [ARGS...]
// Runs once per rank, under the launcher: sets RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE from the launcher's own variables, then runs COMMAND.
// WORLD_SIZE and LOCAL_WORLD_SIZE keep the launcher-wide values ezpz exported
// when the launcher does not set its own. No shell is involved.
// With EZPZ_STDIN set, rank 0 takes its stdin from ezpz's relay there (or from
// /dev/null, when it says so) and the other ranks from /dev/null
// (lib/ezpz/sys/stdin_relay.hpp says why).
//
// It stays as COMMAND's parent, to say which rank failed: MPICH's Hydra says
// nothing when a rank exits non-zero, and Open MPI names no host. A rank that
// fails on its own gets one line on stderr (rank_env.hpp's exit_report), which
// ezpz reads back from the output; a rank stopped from outside (a signal to
// its process group: the launcher tearing the job down) gets none, so a
// 1000-rank Ctrl-C prints nothing. After a failure's line it waits until the launcher has
// read the output (let_output_leave). Its status is passed on as it was: the same
// exit code, or death by the same signal (without a second core file).
// Signals: launchers signal the rank's process group (Hydra, slurmstepd and
// Open MPI's orted each give a rank its own group), which holds COMMAND too,
// so what comes from the launcher (our parent) is not passed on again; a
// signal from anyone else (`kill PID` of this process) is. The process costs
// one child per rank and sleeps in sigwaitinfo; it holds no stdin, so rank 0's
// relay ends when COMMAND's does.
//
// With EZPZ_OUTPUT_RECORDS=1 (ezpz's plan sets it for rank-aware output) it
// also relays COMMAND's stdout and stderr, through pipes of its own, to its
// own stdout and stderr as records (lib/ezpz/output/rank_records.hpp): whole
// lines, batched into writes of at most PIPE_BUF bytes, each atomic, so no
// launcher can merge two ranks' text inside a line. One thread: poll() on the
// two pipes and a signalfd. A partial line goes out after k_quiet_ms of quiet.
// Its own failure lines stay plain lines on stderr (not records), after the
// rank's output: ezpz reads them back as the launcher's (rank -1).
// With EZPZ_OUTPUT_SOCKET too (ezpz's executor sets it), it connects to ezpz
// over two Unix socket connections, one per stream, and passes ezpz the read
// end of each of COMMAND's pipes: ezpz reads what COMMAND wrote, and nothing
// here copies it. Its own lines follow on the connections. A pipe that cannot
// be passed is relayed over its connection as records; where it cannot
// connect (another host), through the launcher as above.
// In that mode it also sends start-up stamps (lib/ezpz/output/stamp_line.hpp) as
// control records: `exec` (its own start), `first_output`, and the program's
// "EZPZ_STAMP phase" lines, which it takes out of the output (of a pipe it
// passed, ezpz stamps the last two itself).
// With EZPZ_OUTPUT_RECORDS=pipes (`--output raw`) it writes no records: where
// ezpz listens (EZPZ_OUTPUT_SOCKET), it passes ezpz a pipe for each stream
// before COMMAND starts, and COMMAND writes to those ezpz took; elsewhere the
// output is left alone.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ezpz/launchers/rank_env.hpp"
#include "ezpz/output/rank_records.hpp"
#include "ezpz/output/stamp_line.hpp"
#include "ezpz/sys/local_socket.hpp"
#include "ezpz/sys/stdin_relay.hpp"

namespace {

const char* lookup(const char* name) { return std::getenv(name); }

int connect_to(const std::string& name) {
  auto address = ezpz::sys::abstract_address(name);
  if (!address) {
    errno = EINVAL;
    return -1;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 &&
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address->first), address->second) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// A variable of ezpz's for this process alone, taken out of the environment: the rank's own
// children are not ezpz's ranks. Empty when unset.
std::string take_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return {};
  std::string taken = value;
  unsetenv(name);
  return taken;
}

void take_stdin() {
  const std::string path = take_variable(ezpz::sys::k_stdin_socket_variable);
  if (path.empty()) return;
  const char* rank = std::getenv("RANK");
  int fd = -1;
  if (rank != nullptr && std::strcmp(rank, "0") == 0 && path != ezpz::sys::k_no_stdin) {
    fd = connect_to(path);
    if (fd < 0) {
      std::fprintf(stderr,
                   "ezpz-rankenv: rank 0: cannot reach ezpz's stdin at %s: %s; stdin is empty\n",
                   path.c_str(), std::strerror(errno));
    }
  }
  if (fd < 0) fd = ::open("/dev/null", O_RDONLY);
  if (fd > STDIN_FILENO) {
    ::dup2(fd, STDIN_FILENO);
    ::close(fd);
  }
}

[[noreturn]] void exec_command(char** argv) {
  execvp(argv[0], argv);
  int error = errno;
  std::fprintf(stderr, "ezpz-rankenv: %s: %s\n", argv[0], std::strerror(error));
  _exit(error == ENOENT ? 127 : 126);
}

// The signals waited for: every one a process can catch that is not ignored
// here (an ignored one stays ignored, as COMMAND inherits it), and SIGCHLD.
sigset_t waited_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction action {};
    if (sig == SIGKILL || sig == SIGSTOP || ::sigaction(sig, nullptr, &action) != 0) continue;
    if (action.sa_handler != SIG_IGN || sig == SIGCHLD) sigaddset(&set, sig);
  }
  return set;
}

// COMMAND, in a child that dies with us (even of SIGKILL) and sees the signal
// mask and dispositions we were given.
struct Child {
  pid_t pid = -1;
  int exec_error = 0;
};

// What the child reads between clone and exec, and the one thing it writes: it shares our
// memory (CLONE_VM) while we wait (CLONE_VFORK), as posix_spawn's child does. A fork copied
// our page tables and then took a fault on each page either process wrote: 96 against 81
// faults, 0.07-0.08 ms a rank (bench/README.md, 2026-11-28).
struct ExecRequest {
  char** argv;
  const sigset_t* mask;
  bool chld_ignored;
  const int* outputs;  // COMMAND's stdout and stderr (-1: ours), or null: ours
  pid_t parent;
  int error = 0;  // exec's errno; 0 once it succeeded
};

// On its own stack: nothing of ours is overwritten. No handler of ours can run meanwhile: this
// program installs none. It returns rather than call _exit: clone's wrapper then exits with
// that status, and AddressSanitizer, which cannot follow a no-return call off the stack it
// knows, has nothing to warn about.
int exec_child(void* argument) {
  ExecRequest& request = *static_cast<ExecRequest*>(argument);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != request.parent) return 137;           // we died before prctl took hold
  if (request.chld_ignored) ::signal(SIGCHLD, SIG_IGN);  // its own copy: no CLONE_SIGHAND
  if (request.outputs != nullptr) {                      // -1: the one we were given
    if (request.outputs[0] >= 0) ::dup2(request.outputs[0], STDOUT_FILENO);
    if (request.outputs[1] >= 0) ::dup2(request.outputs[1], STDERR_FILENO);
  }
  ::sigprocmask(SIG_SETMASK, request.mask, nullptr);
  execvp(request.argv[0], request.argv);
  request.error = errno;
  return 127;
}

// The child's stack: execvp's PATH search and its script fallback put the PATH and a copy of
// argv there.
std::size_t child_stack_size(char** argv) {
  std::size_t size = 64 * 1024;
  for (char** arg = argv; *arg != nullptr; ++arg) size += sizeof(char*);
  if (const char* path = std::getenv("PATH")) size += 2 * std::strlen(path);
  return (size + 15) & ~std::size_t{15};
}

Child start_child(char** argv, const sigset_t& original_mask, bool chld_ignored,
                  const int* outputs) {
  ExecRequest request{.argv = argv,
                      .mask = &original_mask,
                      .chld_ignored = chld_ignored,
                      .outputs = outputs,
                      .parent = getpid()};
  const std::size_t size = child_stack_size(argv);
  const auto stack = std::make_unique_for_overwrite<char[]>(size);
  // Returns once the child has exec'd or exited (CLONE_VFORK): request.error is its last word.
  const pid_t pid =
      ::clone(exec_child, stack.get() + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &request);
  return {pid, pid > 0 ? request.error : 0};
}

// Signals that ask a process to end (not SIGCONT, SIGWINCH, job-control stops).
bool asks_to_end(int sig) {
  for (int mild : {SIGCONT, SIGWINCH, SIGURG, SIGTSTP, SIGTTIN, SIGTTOU}) {
    if (sig == mild) return false;
  }
  return true;
}

// Passes `sig` on to the child unless the launcher (our parent) or the kernel sent it, which
// reached the child's process group already; true when it asks to end.
bool pass_on(pid_t child, int sig, int code, pid_t sender, pid_t launcher) {
  const bool from_a_process = code <= 0;  // kill(2), sigqueue(3): not the kernel
  if (from_a_process && sender != launcher) ::kill(child, sig);
  return asks_to_end(sig);
}

// Waits for the child, passing on the signals that did not reach it already; true when a
// signal asked us to end (the job is being stopped from outside, not failing on its own).
bool wait_for(const Child& child, const sigset_t& waited, int& status) {
  bool stopped = false;
  const pid_t launcher = getppid();
  for (;;) {
    siginfo_t info{};
    const int sig = ::sigwaitinfo(&waited, &info);
    if (sig == SIGCHLD || sig < 0) {
      if (::waitpid(child.pid, &status, WNOHANG) == child.pid) return stopped;
      continue;
    }
    stopped = pass_on(child.pid, sig, info.si_code, info.si_pid, launcher) || stopped;
  }
}

long now_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000L + now.tv_nsec / 1000000L;
}

// Writes all of `bytes`; false when the reader is gone. Pipes take a write of at most PIPE_BUF
// bytes whole; a file or terminal may take less at a time.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The wall clock, for start-up stamps (ezpz subtracts its own: stamp_line.hpp).
std::int64_t unix_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

// Closes each descriptor that is open and marks it closed (-1).
void close_open(std::span<int> fds) {
  for (int& fd : fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

// Connections straight to ezpz (EZPZ_OUTPUT_SOCKET) for the records of the rank's stdout and
// stderr: both, or neither. Neither where ezpz runs on another host or in another network
// namespace, where nothing listens under that name, or where what listens is not our user's:
// the records then go through the launcher, as our stdout and stderr.
std::array<int, 2> connect_to_ezpz(const std::string& name) {
  std::array<int, 2> fds = {-1, -1};
  for (std::size_t i = 0; i < fds.size() && !name.empty(); ++i) {
    fds[i] = connect_to(name + ezpz::output::k_output_socket_suffixes[i]);
    if (fds[i] >= 0 && ezpz::sys::peer_is_same_user(fds[i])) continue;
    close_open(fds);
    break;
  }
  return fds;
}

// Sends ezpz the read end of one of the rank's pipes (pipe_record()); false where it could not go.
bool offer_pipe(int connection, int read_end, long rank) {
  // One read of ezpz's takes all the pipe holds (k_passed_pipe_size). A user over the kernel's
  // limit on pipe memory keeps the default.
  ::fcntl(read_end, F_SETPIPE_SZ, static_cast<int>(ezpz::output::k_passed_pipe_size));
  return ezpz::sys::send_with_fd(connection, ezpz::output::pipe_record(rank), read_end);
}

// ezpz's answer to offer_pipe(): true once it has taken the pipe, which we then let go of.
bool pipe_taken(int connection, int read_end) {
  char answer = 0;
  ssize_t got = -1;
  do got = ::read(connection, &answer, 1);
  while (got < 0 && errno == EINTR);
  if (got != 1 || answer != ezpz::output::k_pipe_taken) return false;
  ::close(read_end);
  return true;
}

// Hands the read ends of the rank's two pipes to ezpz, each over its stream's connection: ezpz
// reads the rank's bytes itself, and none passes through here. Both are offered before either
// answer is awaited: the rank waits for one round trip through ezpz's loop, not two. Returns
// what is left to relay of each: -1 once ezpz has taken it; the pipe itself where there is no
// connection, or the message could not go, or ezpz refused it (or the kernel dropped it: no
// descriptor left in ezpz). Until ezpz answers, the rank's output waits in the pipe, which both
// still hold.
std::array<int, 2> pass_pipes(const std::array<int, 2>& direct, std::array<int, 2> read_ends,
                              long rank) {
  bool offered[2] = {false, false};
  for (std::size_t i = 0; i < 2; ++i) {
    offered[i] = direct[i] >= 0 && read_ends[i] >= 0 && offer_pipe(direct[i], read_ends[i], rank);
  }
  for (std::size_t i = 0; i < 2; ++i) {
    if (offered[i] && pipe_taken(direct[i], read_ends[i])) read_ends[i] = -1;
  }
  return read_ends;
}

// `--output raw` (k_pipes_only), where ezpz listens on this host: a pipe for each of the rank's
// streams, passed to ezpz before the rank starts, so a pipe ezpz refuses is never the rank's (it
// keeps ours) and nothing here relays. ezpz passes the bytes on as they come. The connections
// carry only our own lines.
struct PassedPipes {
  std::array<int, 2> direct = {-1, -1};   // the connections; -1: none, the output left alone
  std::array<int, 2> outputs = {-1, -1};  // the rank's stdout and stderr; -1: ours
};

PassedPipes pass_pipes_first(const std::string& ezpz_socket, long rank) {
  PassedPipes passed{.direct = connect_to_ezpz(ezpz_socket)};
  int ends[2][2] = {{-1, -1}, {-1, -1}};
  for (std::size_t i = 0; i < 2 && passed.direct[0] >= 0; ++i) {
    if (::pipe2(ends[i], O_CLOEXEC) != 0) ends[i][0] = ends[i][1] = -1;
  }
  const std::array<int, 2> left = pass_pipes(passed.direct, {ends[0][0], ends[1][0]}, rank);
  for (std::size_t i = 0; i < 2; ++i) {
    if (ends[i][0] >= 0 && left[i] < 0) {  // taken: the read end is ezpz's alone
      passed.outputs[i] = ends[i][1];
      continue;
    }
    close_open(ends[i]);
  }
  return passed;
}

// One of the rank's two streams: its pipe, where its records go, and the records on their way.
struct Relay {
  Relay(int from_fd, int to_fd, long rank, std::size_t write_max)
      : from(from_fd),
        to(to_fd),
        encoder(
            rank, [this](std::string_view records) { put(records); }, write_max) {
    // The program's "EZPZ_STAMP phase [seconds]" lines become control records, stamped now.
    encoder.take_stamps([this](std::string_view line) {
      const auto stamp = ezpz::output::program_stamp_text(line, unix_ns());
      if (stamp) encoder.control(*stamp);
      return stamp.has_value();
    });
  }
  void stamp_now(std::string_view phase, std::int64_t ns, std::string_view host = {}) {
    encoder.control(ezpz::output::stamp_text(phase, ns, host));
  }
  // Whole records, at most PIPE_BUF bytes (k_write_max) into the launcher's pipe, in one write;
  // straight to ezpz, more. A reader gone: the rank's next write fails as it would have without
  // us (EPIPE, SIGPIPE).
  void put(std::string_view records) {
    if (to >= 0 && !write_all(to, records)) {
      close_pipe();
      to = -1;
    }
  }
  void send() { encoder.send(); }
  void close_pipe() {
    if (from >= 0) ::close(from);
    from = -1;
  }
  // Reads what the pipe holds; at its end the partial line goes out.
  void read_some() {
    static char buffer[64 * 1024];
    const ssize_t n = ::read(from, buffer, sizeof buffer);
    got_bytes = got_bytes || n > 0;
    if (n > 0) encoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
      close_pipe();
      encoder.flush();
    }
    send();
    last_read_ms = now_ms();
  }
  int from;
  int to;
  ezpz::output::RecordEncoder encoder;
  long last_read_ms = 0;
  bool got_bytes = false;
};

// poll()'s timeout: until the first partial line has been quiet for k_quiet_ms (-1: none).
int quiet_timeout(const Relay* const* relays, long now) {
  int timeout = -1;
  for (int i = 0; i < 2; ++i) {
    if (!relays[i]->encoder.holding()) continue;
    const long left = relays[i]->last_read_ms + ezpz::output::k_quiet_ms - now;
    const int wait = left < 0 ? 0 : static_cast<int>(left);
    timeout = timeout < 0 ? wait : std::min(timeout, wait);
  }
  return timeout;
}

void flush_quiet(Relay* const* relays, long now) {
  for (int i = 0; i < 2; ++i) {
    if (!relays[i]->encoder.holding()) continue;
    if (now - relays[i]->last_read_ms < ezpz::output::k_quiet_ms) continue;
    relays[i]->encoder.flush();
  }
}

// wait_for, relaying the rank's output meanwhile. When the child has ended, what its pipes
// hold is relayed; a grandchild that keeps them open is not waited for.
bool relay_and_wait(const Child& child, int signals, Relay* const* relays, int& status) {
  bool stopped = false;
  bool exited = false;
  bool first_output = false;
  const pid_t launcher = getppid();
  for (;;) {
    pollfd fds[3] = {{.fd = signals, .events = POLLIN, .revents = 0},
                     {.fd = relays[0]->from, .events = POLLIN, .revents = 0},
                     {.fd = relays[1]->from, .events = POLLIN, .revents = 0}};
    const bool open = fds[1].fd >= 0 || fds[2].fd >= 0;
    if (exited && !open) break;
    const int ready = ::poll(fds, 3, exited ? 0 : quiet_timeout(relays, now_ms()));
    if (ready == 0 && exited) break;
    const std::int64_t woke_ns = first_output ? 0 : unix_ns();
    for (int i = 0; i < 2; ++i) {
      if (fds[i + 1].revents != 0) relays[i]->read_some();
    }
    if (!first_output && (relays[0]->got_bytes || relays[1]->got_bytes)) {
      first_output = true;
      relays[0]->stamp_now(ezpz::output::k_first_output_phase, woke_ns);
      relays[0]->send();
    }
    flush_quiet(relays, now_ms());
    signalfd_siginfo info{};
    if (exited || (fds[0].revents & POLLIN) == 0 ||
        ::read(signals, &info, sizeof info) != sizeof info) {
      continue;
    }
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      exited = ::waitpid(child.pid, &status, WNOHANG) == child.pid;
    } else {
      stopped =
          pass_on(child.pid, sig, info.ssi_code, static_cast<pid_t>(info.ssi_pid), launcher) ||
          stopped;
    }
  }
  for (int i = 0; i < 2; ++i) {
    relays[i]->encoder.flush();
    relays[i]->close_pipe();
  }
  return stopped;
}

// Whether ezpz asked for the rank's output (EZPZ_OUTPUT_RECORDS) as `value`.
bool output_wanted_as(const char* value) {
  const char* wanted = std::getenv(ezpz::output::k_records_variable);
  return wanted != nullptr && std::strcmp(wanted, value) == 0;
}

// The rank, when ezpz asked for its output (records, or its pipes) and a launcher set RANK; -1
// otherwise: the output is left alone.
long output_rank() {
  const char* rank = std::getenv("RANK");
  if (rank == nullptr || !(output_wanted_as(ezpz::output::k_records_on) ||
                           output_wanted_as(ezpz::output::k_pipes_only))) {
    return -1;
  }
  char* end = nullptr;
  const long value = std::strtol(rank, &end, 10);
  return (*rank != '\0' && *end == '\0' && value >= 0) ? value : -1;
}

// A failed rank's last lines are the ones its user needs (a traceback), and a launcher that ends
// the job at a rank's failure may never pass them on: srun --kill-on-bad-exit stops the step when
// slurmstepd reports the rank's exit, and stops reading the output still on its way (in 2 of 8
// runs on the test cluster it lost some or all of a failed rank's 3,001 stderr lines). So a failed
// rank's exit waits until the launcher has read our stdout and stderr (their pipes are empty),
// then k_linger_ms more for the launcher's own hop (slurmstepd to srun): at most
// k_drain_max_ms + k_linger_ms later, on a failure only.
constexpr long k_drain_max_ms = 2000;
constexpr long k_linger_ms = 250;

// Bytes our stdout or stderr pipe still holds; 0 for anything else (a file, a terminal).
int unread_bytes(int fd) {
  struct stat info {};
  int count = 0;
  if (::fstat(fd, &info) != 0 || !S_ISFIFO(info.st_mode)) return 0;
  return ::ioctl(fd, FIONREAD, &count) == 0 ? count : 0;
}

void let_output_leave() {
  const long until = now_ms() + k_drain_max_ms;
  while ((unread_bytes(STDOUT_FILENO) > 0 || unread_bytes(STDERR_FILENO) > 0) && now_ms() < until)
    ::usleep(5000);
  ::usleep(k_linger_ms * 1000);
}

// Ends this process as the child ended: its exit code, or its signal.
[[noreturn]] void end_as(int status) {
  if (!WIFSIGNALED(status)) _exit(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  ::prctl(PR_SET_DUMPABLE, 0);  // no core file of ours next to (or over) the rank's
  ::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  _exit(128 + sig);  // a signal whose default is not to end a process
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) std::strcpy(name, "?");
  const char* launcher = std::getenv("EZPZ_LAUNCHER");
  return ezpz::rank_host(launcher ? launcher : "", lookup, name);
}

[[noreturn]] void run_as_parent(char** argv, std::int64_t exec_ns, const std::string& ezpz_socket) {
  struct sigaction chld {};
  ::sigaction(SIGCHLD, nullptr, &chld);
  const bool chld_ignored = chld.sa_handler == SIG_IGN;
  if (chld_ignored) ::signal(SIGCHLD, SIG_DFL);  // else the kernel reaps it and keeps its status
  const sigset_t waited = waited_signals();
  sigset_t original;
  ::sigprocmask(SIG_BLOCK, &waited, &original);
  const long rank_number = output_rank();
  const bool pipes_only = rank_number >= 0 && output_wanted_as(ezpz::output::k_pipes_only);
  PassedPipes passed = pipes_only ? pass_pipes_first(ezpz_socket, rank_number) : PassedPipes{};
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  const int signals = rank_number >= 0 && !pipes_only ? ::signalfd(-1, &waited, SFD_CLOEXEC) : -1;
  const bool records =
      signals >= 0 && ::pipe2(out_pipe, O_CLOEXEC) == 0 && ::pipe2(err_pipe, O_CLOEXEC) == 0;
  const int outputs[2] = {out_pipe[1], err_pipe[1]};
  const Child child =
      start_child(argv, original, chld_ignored, records ? outputs : passed.outputs.data());
  if (child.pid < 0) {  // no child: run as before, unsupervised
    ::sigprocmask(SIG_SETMASK, &original, nullptr);
    if (chld_ignored) ::signal(SIGCHLD, SIG_IGN);
    exec_command(argv);
  }
  const int null = ::open("/dev/null", O_RDONLY);  // rank 0's relay is the child's alone
  if (null > STDIN_FILENO) {
    ::dup2(null, STDIN_FILENO);
    ::close(null);
  }
  int status = 0;
  bool stopped = false;
  int report_to = STDERR_FILENO;  // our own lines: after the rank's, on the same way
  if (records) {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    // Connected once the rank has started: its exec does not wait for it.
    const std::array<int, 2> direct = connect_to_ezpz(ezpz_socket);
    const bool straight = direct[0] >= 0;
    const std::size_t write_max =
        straight ? ezpz::output::k_direct_write_max : ezpz::output::k_write_max;
    if (straight) report_to = direct[1];
    const std::array<int, 2> reads = pass_pipes(direct, {out_pipe[0], err_pipe[0]}, rank_number);
    Relay out(reads[0], straight ? direct[0] : STDOUT_FILENO, rank_number, write_max);
    Relay err(reads[1], report_to, rank_number, write_max);
    Relay* const relays[2] = {&out, &err};
    out.stamp_now(ezpz::output::k_exec_phase, exec_ns, host_name());
    out.send();
    stopped = relay_and_wait(child, signals, relays, status);
  } else {
    close_open(passed.outputs);
    if (passed.direct[1] >= 0) report_to = passed.direct[1];
    stopped = wait_for(child, waited, status);
  }
  if (child.exec_error != 0) {
    ::dprintf(report_to, "ezpz-rankenv: %s: %s\n", argv[0], std::strerror(child.exec_error));
    _exit(child.exec_error == ENOENT ? 127 : 126);
  }
  const char* rank = std::getenv("RANK");  // unset: not under a launcher, nobody to tell
  if (status != 0 && !stopped && rank != nullptr) {
    const std::string line = ezpz::exit_report(rank, getpid(), host_name(), status) + "\n";
    (void)!::write(report_to, line.data(), line.size());
    // Only what goes through the launcher can be lost there: ezpz reads a passed pipe itself.
    if (report_to == STDERR_FILENO) let_output_leave();
  }
  end_as(status);
}

// ezpz-rankenv --decode DIR (hidden; for tests and bench/output_lines): reads records on
// stdin and writes each rank's bytes to DIR/RANK (the launcher's own lines to DIR/launcher),
// then prints how many lines came whole and how many in pieces.
int decode(const char* dir) {
  std::map<long, std::FILE*> files;  // by rank, opened at its first line
  long counts[2] = {0, 0};           // pieces, whole lines
  bool failed = false;
  ezpz::output::RecordAssembler assembler([&](const ezpz::output::RankLine& line) {
    if (line.control) return;  // start-up stamps: not the rank's bytes
    std::FILE*& file = files[line.rank];
    const std::string name = line.rank < 0 ? "launcher" : std::to_string(line.rank);
    if (file == nullptr) file = std::fopen((std::string(dir) + "/" + name).c_str(), "w");
    failed = failed || file == nullptr;
    if (file == nullptr) return;
    std::fwrite(line.text.data(), 1, line.text.size(), file);
    if (line.complete) std::fputc('\n', file);
    ++counts[line.complete ? 1 : 0];
  });
  static char buffer[64 * 1024];
  for (ssize_t n; (n = ::read(STDIN_FILENO, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    assembler.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
  assembler.finish();
  for (auto& [rank, file] : files) {
    if (file != nullptr) std::fclose(file);
  }
  std::printf("whole %ld pieces %ld\n", counts[1], counts[0]);
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t exec_ns = unix_ns();  // the launcher started the rank: the `exec` stamp
  if (argc == 3 && std::strcmp(argv[1], "--decode") == 0) return decode(argv[2]);
  if (argc < 2) {
    std::fprintf(stderr, "ezpz-rankenv: usage: ezpz-rankenv COMMAND [ARGS...]\n");
    return 2;
  }
  const char* launcher = std::getenv("EZPZ_LAUNCHER");
  for (const auto& [name, value] : ezpz::map_rank_env(launcher ? launcher : "", lookup)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  take_stdin();
  run_as_parent(argv + 1, exec_ns, take_variable(ezpz::output::k_output_socket_variable));
}
