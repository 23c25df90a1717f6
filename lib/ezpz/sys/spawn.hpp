#pragma once
// Starting processes: the one spawn behind the launcher (executor.cpp), doctor's probes and
// the `--version` and accelerator look-ups. posix_spawn, never a shell: glibc's is
// clone(CLONE_VFORK) + exec, so nothing of ezpz is copied, and a failed exec comes back as its
// errno.
#include <signal.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"

namespace ezpz::sys {

// What one of the child's standard streams (0, 1, 2) is: a descriptor of ezpz's, or one of:
inline constexpr int k_inherit = -1;   // ezpz's own
inline constexpr int k_dev_null = -2;  // /dev/null

struct SpawnOptions {
  std::array<int, 3> stdio = {k_inherit, k_inherit, k_inherit};
  // A process group of its own (setpgid(0, 0) before exec), so that one kill(-pid) reaches
  // everything it starts.
  bool own_process_group = false;
  // For a caller that blocks and handles signals itself: these go back to their default action
  // in the child, and its signal mask is cleared. Null: the child inherits both as they are.
  const sigset_t* default_signals = nullptr;
};

// The child, or why it could not start: posix_spawn's error, the fork's or the exec's.
struct Spawned {
  pid_t pid = -1;
  int error = 0;  // an errno; 0 when it started
};

// Starts `path` with exactly `argv` (argv[0] as given, not `path`) and exactly `env`.
Spawned spawn_process(const std::string& path, const std::vector<std::string>& argv, const Env& env,
                      const SpawnOptions& options);

// The child's wait status. Past `deadline`, `kill_target` (the pid, or -pid for the child's
// whole process group) gets SIGKILL, the child is reaped, and nullopt returned.
std::optional<int> wait_or_kill(pid_t pid, std::chrono::steady_clock::time_point deadline,
                                pid_t kill_target);

// A helper program run to its end: what it printed and how it ended.
struct CapturedRun {
  std::string start_error;  // "<argv[0]>: <why>" when it could not start; empty when it ran
  bool timed_out = false;
  std::optional<int> exit_code;  // set when it exited on its own
  int signal = 0;                // set when a signal ended it
  std::string out;               // stdout, at most 1 MiB (the rest is read and dropped)
  std::string err;               // stderr, likewise
};

// A helper program started by start_captured, not yet waited for.
struct CapturedChild {
  pid_t pid = -1;
  std::array<int, 2> fds{-1, -1};  // read ends of its stdout and stderr
  std::string start_error;
};

// Starts `argv` (argv[0] a full path) now, in its own process group, with stdin on /dev/null
// and stdout and stderr on pipes: the tools' output never reaches the user.
CapturedChild start_captured(const std::vector<std::string>& argv, const Env& env);

// Reads the child's output until it ends; past `deadline` its whole group is killed.
CapturedRun finish_captured(const CapturedChild& child,
                            std::chrono::steady_clock::time_point deadline);

// Long enough for a healthy nvidia-smi or `mpiexec --version`, short enough that a hung driver
// does not hold up the launch.
inline constexpr std::chrono::seconds k_run_captured_timeout{2};

// The stdout of `argv` (argv[0] a full path); nullopt when it cannot start, fails, or takes
// more than k_run_captured_timeout (then its group is killed).
std::optional<std::string> run_captured(const std::vector<std::string>& argv, const Env& env);

}  // namespace ezpz::sys
