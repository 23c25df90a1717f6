#pragma once
// The probes behind `ezpz doctor`: they look at this node and fill a
// doctor::Snapshot; lib/ezpz/doctor/ judge it. The slow ones run
// concurrently, each with a deadline, so doctor takes about as long as its
// slowest probe (ezpz-smoke loading libtorch, or python3 importing torch).
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/doctor/doctor.hpp"
#include "ezpz/launch/plan.hpp"

namespace ezpz::sys {

// Starts `argv` (argv[0] a full path) now, in its own process group, with
// stdout and stderr captured and stdin on /dev/null. The future's value comes
// once it has exited, or once `timeout` has passed and its group was killed.
// Never throws: a failure to start is the run's start_error.
std::future<doctor::ProgramRun> start_program(std::vector<std::string> argv, const Env& env,
                                              std::chrono::milliseconds timeout);

// getaddrinfo() for every host at once (glibc's getaddrinfo_a); a host not
// answered within `timeout` is reported timed out.
std::vector<doctor::HostLookup> resolve_hosts(const std::vector<std::string>& hosts,
                                              std::chrono::milliseconds timeout);

// Everything the snapshot still lacks once the caller has filled in the
// environment, the command line's choices, the scheduler and the allocation
// (and started the trainer's probe): profile files, the launcher and its
// --version, the GPUs a vendor tool lists, host look-ups, yeet's storage, limits, a port, the
// Python environment and what its python3 imports, and ~/.netrc. Probes that fail say so in the
// snapshot.
void probe_node(doctor::Snapshot& snapshot);

// `ezpz doctor --deep`'s probe launch: the plan run like any launch, but
// stopped after `timeout`, with the launcher's stdout captured through
// `output_path` (made, read, then removed).
struct ProbeLaunch {
  int status = 0;  // the launcher's exit status (128+N for signal N)
  bool timed_out = false;
  std::string output;
};
ProbeLaunch run_probe_launch(const LaunchPlan& plan, const Env& env,
                             std::chrono::milliseconds timeout, const std::string& output_path);

// The login name: USER, LOGNAME, else the password database; "" when unknown.
std::string current_user(const Env& env);

}  // namespace ezpz::sys
