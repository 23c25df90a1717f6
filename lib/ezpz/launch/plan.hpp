#pragma once
// The launch plan: everything the executor needs and nothing else. Built by
// plan_launch() (pure, lib/ezpz/launch/plan.cpp), printed by --dry-run, run by
// lib/ezpz/sys/executor.cpp.
#include <string>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/env.hpp"
#include "ezpz/launch/layout.hpp"
#include "ezpz/launch/placement.hpp"
#include "ezpz/launchers/binding.hpp"
#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

struct FileToWrite {
  std::string path;
  std::string contents;
  unsigned mode = 0600;  // only this user: hostfiles; 0644 for a batch script others run
  bool operator==(const FileToWrite&) const = default;
};

struct LaunchPlan {
  std::vector<std::string> argv;   // argv[0] is the launcher, looked up on PATH
  EnvList env;                     // set on top of ezpz's own environment, in order
  std::vector<FileToWrite> files;  // written (atomically) before the launcher starts
  // Rank 0 takes ezpz's stdin from a relay (lib/ezpz/sys/stdin_relay.hpp) rather than from
  // the launcher: ezpz-rankenv wraps the ranks, and rank 0 runs on this host.
  bool relay_stdin = false;
  // ezpz-rankenv wraps the ranks, under a launcher that gives each its own pipes (not Open MPI's
  // pseudo-terminal): with `--output raw`, those on ezpz's host can pass ezpz their pipes
  // (the executor then sets EZPZ_OUTPUT_RECORDS=pipes; output/rank_records.hpp).
  bool ranks_can_pass_pipes = false;
  bool operator==(const LaunchPlan&) const = default;
};

// What the user asked for, from the command line.
struct LaunchRequest {
  std::vector<std::string> command;        // the user's command, never parsed
  TopologyRequest topology;                // -n, --ppn, --nhosts
  std::vector<std::string> excluded;       // --exclude and --exclude-file, merged
  std::optional<std::string> launcher;     // --launcher: a dialect name
  std::optional<std::string> cpu_bind;     // --cpu-bind (or CPU_BIND)
  GpuRequest gpus;                         // --gpus-per-rank, --no-gpu-bind
  EnvList env;                             // -x/--env, in order
  std::vector<std::string> launcher_args;  // --launcher-arg, untouched
  bool rank_env = true;                    // false: --no-rank-env
  bool output_watched = false;             // --idle-timeout reads the ranks' output as it comes
  bool output_records = false;             // --output: ezpz-rankenv writes rank records
  bool node_step = false;  // ezpz's own one-per-node step (kill, stacks, yeet): lines kept whole
};

// Values gathered from the world for the planner.
struct PlanInputs {
  Allocation allocation;  // hosts replaced by --hostfile's when given
  MachineProfile profile;
  SlotsPerHost slots;
  int master_port = 0;
  std::string rankenv;   // path of ezpz-rankenv
  std::string run_dir;   // where ezpz writes hostfiles
  Env environment;       // ezpz's own environment: a variable set there beats a profile default
  std::string hostname;  // this host's name, as gethostname() says
};

// The plan and the facts behind it, for --dry-run --json and the logs.
struct PlannedLaunch {
  LaunchPlan plan;
  std::string launcher;  // the dialect used
  std::vector<std::string> hosts;
  Topology topology;
  std::string hostfile;
  std::string master_addr;
  GpuPlacement gpus;    // each local rank's GPUs, and the rule that chose them
  CoreBinding binding;  // each local rank's cores
  // Why the profile's CPU binding is not applied (torchrun binds nothing); empty when it is.
  std::string binding_note;
};

// One host per line: what a hostfile holds.
std::string hostfile_text(const std::vector<std::string>& hosts);

// The path of the hostfile ezpz writes for `hosts` (under in.run_dir, named by its content),
// its text added to `files`.
std::string written_hostfile(const std::vector<std::string>& hosts, const PlanInputs& in,
                             std::vector<FileToWrite>& files);

/// Pure: same inputs, same plan. Never reads the environment or the filesystem.
/// Throws Error for an impossible request (each message one sentence).
PlannedLaunch plan_launch(const LaunchRequest& request, const PlanInputs& inputs);

}  // namespace ezpz
