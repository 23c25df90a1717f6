// ezpz-rankenv COMMAND [ARGS...]
// Runs once per rank, under the launcher: sets RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE from the launcher's own variables, then runs COMMAND.
// WORLD_SIZE and LOCAL_WORLD_SIZE keep the launcher-wide values ezpz exported
// when the launcher does not set its own. No shell is involved.
// With EZPZ_STDIN set, rank 0 takes its stdin from ezpz's relay there and the
// other ranks from /dev/null (lib/ezpz/sys/stdin_relay.hpp says why).
//
// It stays as COMMAND's parent, to say which rank failed: MPICH's Hydra says
// nothing when a rank exits non-zero, and Open MPI names no host. A rank that
// fails on its own gets one line on stderr (rank_env.hpp's exit_report), which
// ezpz reads back from the output; a rank stopped from outside (a signal to
// its process group: the launcher tearing the job down) gets none, so a
// 1000-rank Ctrl-C prints nothing. Its status is passed on as it was: the same
// exit code, or death by the same signal (without a second core file).
// Signals: launchers signal the rank's process group (Hydra, slurmstepd and
// Open MPI's orted each give a rank its own group), which holds COMMAND too,
// so what comes from the launcher (our parent) is not passed on again; a
// signal from anyone else (`kill PID` of this process) is. The process costs
// one fork per rank and sleeps in sigwaitinfo; it holds no stdin, so rank 0's
// relay ends when COMMAND's does.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ezpz/launchers/rank_env.hpp"
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

void take_stdin() {
  const char* variable = std::getenv(ezpz::sys::k_stdin_socket_variable);
  if (variable == nullptr) return;
  const std::string path = variable;
  unsetenv(ezpz::sys::k_stdin_socket_variable);  // the job's own children are not rank 0's stdin
  const char* rank = std::getenv("RANK");
  int fd = -1;
  if (rank != nullptr && std::strcmp(rank, "0") == 0) {
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
// mask and dispositions we were given. Exec errors: the child's, on a pipe.
struct Child {
  pid_t pid = -1;
  int exec_error = 0;
};

Child start_child(char** argv, const sigset_t& original_mask, bool chld_ignored) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137);  // we died before prctl took hold
    if (chld_ignored) ::signal(SIGCHLD, SIG_IGN);
    ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    execvp(argv[0], argv);
    int error = errno;
    (void)!::write(pipe_fds[1], &error, sizeof error);
    _exit(127);
  }
  ::close(pipe_fds[1]);
  Child child{pid, 0};
  if (pid > 0 && ::read(pipe_fds[0], &child.exec_error, sizeof child.exec_error) <= 0) {
    child.exec_error = 0;
  }
  ::close(pipe_fds[0]);
  return child;
}

// Signals that ask a process to end (not SIGCONT, SIGWINCH, job-control stops).
bool asks_to_end(int sig) {
  for (int mild : {SIGCONT, SIGWINCH, SIGURG, SIGTSTP, SIGTTIN, SIGTTOU}) {
    if (sig == mild) return false;
  }
  return true;
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
    stopped = stopped || asks_to_end(sig);
    const bool from_a_process = info.si_code <= 0;  // kill(2), sigqueue(3): not the kernel
    if (from_a_process && info.si_pid != launcher) ::kill(child.pid, sig);
  }
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

[[noreturn]] void run_as_parent(char** argv) {
  struct sigaction chld {};
  ::sigaction(SIGCHLD, nullptr, &chld);
  const bool chld_ignored = chld.sa_handler == SIG_IGN;
  if (chld_ignored) ::signal(SIGCHLD, SIG_DFL);  // else the kernel reaps it and keeps its status
  const sigset_t waited = waited_signals();
  sigset_t original;
  ::sigprocmask(SIG_BLOCK, &waited, &original);
  const Child child = start_child(argv, original, chld_ignored);
  if (child.pid < 0) {  // no fork: run as before, unsupervised
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
  const bool stopped = wait_for(child, waited, status);
  if (child.exec_error != 0) {
    std::fprintf(stderr, "ezpz-rankenv: %s: %s\n", argv[0], std::strerror(child.exec_error));
    _exit(child.exec_error == ENOENT ? 127 : 126);
  }
  const char* rank = std::getenv("RANK");  // unset: not under a launcher, nobody to tell
  if (status != 0 && !stopped && rank != nullptr) {
    const std::string line = ezpz::exit_report(rank, getpid(), host_name(), status) + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  end_as(status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "ezpz-rankenv: usage: ezpz-rankenv COMMAND [ARGS...]\n");
    return 2;
  }
  const char* launcher = std::getenv("EZPZ_LAUNCHER");
  for (const auto& [name, value] : ezpz::map_rank_env(launcher ? launcher : "", lookup)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  take_stdin();
  run_as_parent(argv + 1);
}
