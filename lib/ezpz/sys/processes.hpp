#pragma once
// Finding and signalling the processes ezpz started (ezpz kill), and naming runs.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/supervise/kill.hpp"

namespace ezpz::sys {

// A fresh run id: "<YYYYmmdd-HHMMSS>-<host>-<pid>", unique per launch.
std::string make_run_id(const std::string& host);

// Every process on this node tagged with an EZPZ_RUN_ID whose environment
// this user can read, with the scheduler job it belongs to.
std::vector<kill::Process> list_processes();
// The same, among `pids` only.
std::vector<kill::Process> list_processes(const std::vector<int>& pids);

// Makes this process the child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER):
// a descendant orphaned by its parent's exit (a proxy that called setsid, a daemonised rank)
// becomes this process's child instead of init's, so it stays findable among
// descendants_of_self() without reading every process on the node.
void adopt_orphans();

// Every living descendant of this process (children first); nullopt where the kernel does not
// list children (/proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN).
std::optional<std::vector<int>> descendants_of_self();

// Collects (waitpid, WNOHANG) those of `pids` that are this process's children and have
// exited: adopted orphans would otherwise stay zombies until ezpz exits.
void reap_exited(const std::vector<int>& pids);

// One of the launcher's own processes (launcher_table.hpp's `parts`), dead of a signal.
struct KilledPart {
  int pid = 0;
  std::string name;  // its comm: "hydra_pmi_proxy"
  int signal = 0;
};

// A child of `launcher` named in `names` that died of a signal and that the launcher has not
// reaped (a zombie: /proc/PID/stat's state and, since Linux 3.5, its wait status); nullopt when
// none has.
std::optional<KilledPart> killed_part(int launcher, const std::vector<std::string>& names);

// The command line of `pid` (words joined by spaces); empty when it is gone.
std::string command_of(int pid);

struct SignalResult {
  kill::Process process;
  bool gone = false;       // it exited (or had already)
  bool escalated = false;  // it needed SIGKILL after `grace`
  std::string error;       // kill(2) failed (EPERM ...)
};

// Sends `signal` to each process, once, waiting for nothing (`gone`: it had already exited).
std::vector<SignalResult> signal_once(const std::vector<kill::Process>& targets, int signal);

// Sends `signal` to each process; those still alive after `grace` get SIGKILL
// (unless `signal` was SIGKILL or a stop/continue signal).
std::vector<SignalResult> signal_processes(const std::vector<kill::Process>& targets, int signal,
                                           std::chrono::milliseconds grace);

}  // namespace ezpz::sys
