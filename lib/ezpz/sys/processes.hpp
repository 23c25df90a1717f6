#pragma once
// Finding and signalling the processes ezpz started (ezpz kill), and naming runs.
#include <chrono>
#include <string>
#include <vector>

#include "ezpz/supervise/kill.hpp"

namespace ezpz::sys {

// A fresh run id: "<YYYYmmdd-HHMMSS>-<host>-<pid>", unique per launch.
std::string make_run_id(const std::string& host);

// Every process on this node tagged with an EZPZ_RUN_ID whose environment
// this user can read, with the scheduler job it belongs to.
std::vector<kill::Process> list_processes();

// The command line of `pid` (words joined by spaces); empty when it is gone.
std::string command_of(int pid);

struct SignalResult {
  kill::Process process;
  bool gone = false;       // it exited (or had already)
  bool escalated = false;  // it needed SIGKILL after `grace`
  std::string error;       // kill(2) failed (EPERM ...)
};

// Sends `signal` to each process; those still alive after `grace` get SIGKILL
// (unless `signal` was SIGKILL or a stop/continue signal).
std::vector<SignalResult> signal_processes(const std::vector<kill::Process>& targets, int signal,
                                           std::chrono::milliseconds grace);

}  // namespace ezpz::sys
