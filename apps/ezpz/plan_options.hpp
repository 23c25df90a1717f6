#pragma once
// The options `ezpz launch` and `ezpz test` share, and the steps both take:
// gather the world, plan, then print the plan or run it.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "ezpz/doctor/this_host.hpp"
#include "ezpz/launch/plan.hpp"
#include "ezpz/launch/prepared.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/launchers/launcher_identity.hpp"

namespace ezpz {

// The first hosts' look-ups (16 hosts, 0.5 s at most): whether a host list names this host
// under another name (doctor::lists_this_host).
std::vector<doctor::HostLookup> first_lookups(const std::vector<std::string>& hosts);

struct PlanOptions {
  long nprocs = 0;
  long ppn = 0;
  long nhosts = 0;
  std::optional<std::string> hostfile;
  std::vector<std::string> exclude;
  std::optional<std::string> exclude_file;
  std::optional<std::string> machine;
  std::optional<std::string> scheduler;
  std::optional<std::string> launcher;
  std::optional<std::string> launcher_program;
  std::optional<std::string> cpu_bind;
  std::vector<std::string> env;
  std::vector<std::string> launcher_args;
  bool no_rank_env = false;
  long gpus_per_rank = 1;
  bool no_gpu_bind = false;
  CLI::Option* gpus_per_rank_option = nullptr;
  bool dry_run = false;
  bool json = false;
  // Set by subcommands that place one rank per node themselves (yeet, doctor
  // --deep): replaces -n/--ppn, which they do not offer.
  std::optional<long> fixed_ppn;
  bool mpi_program = false;  // add the profile's mpi_launcher_args
  bool output_watched = false;  // set from --idle-timeout: the ranks' output is read live
  bool output_records = false;  // set from --output: the ranks write rank records
  bool node_step = false;       // plan_one_rank_per_host: ezpz's own step, its lines kept whole
  // Which of -n/--ppn/--nhosts were given (0 is a value to reject, not "unset").
  CLI::Option* nprocs_option = nullptr;
  CLI::Option* ppn_option = nullptr;
  CLI::Option* nhosts_option = nullptr;
  // Without rank options: -n/--ppn are accepted only to be refused plainly.
  CLI::Option* refused_rank_option = nullptr;
  std::string rank_refusal;
};

// Declares the shared options on a subcommand. Without `rank_options` the
// subcommand chooses ranks itself: no -n, --ppn, --no-rank-env or --cpu-bind.
void add_plan_options(CLI::App& cmd, PlanOptions& options, bool rank_options = true);

// -n/--np/--nproc and --ppn alone, checked as add_plan_options checks them:
// for `ezpz submit`, which passes them on to the job's launch.
void add_rank_count_options(CLI::App& cmd, PlanOptions& options);

// `value` where `option` (one of the *_option pointers above) was given on the command line.
std::optional<long> given(const CLI::Option* option, long value);

// Throws the plain usage error when -n/--ppn were given to a subcommand
// added with rank_options=false.
void refuse_rank_options(const PlanOptions& options);

// One rank on each host of the allocation, no torch rank contract: how the
// bundled MPI helpers (the yeet stager, the doctor probe) are planned.
void plan_one_rank_per_host(PlanOptions& options);

// `command` once on every node (plan_one_rank_per_host) beside a running job, run to its end
// or `limit`; returns its standard output, through a file (never the user's terminal). Each
// node's copy finds its node's ranks by their EZPZ_RUN_ID (`ezpz stacks --on-node`, `ezpz kill
// --on-node --ranks-only`), so the step gets a run id of its own.
std::string node_step_output(std::vector<std::string> command, std::chrono::seconds limit,
                             const Context& context);

// Gathers the world and plans `command` (pure planning on gathered values).
PreparedLaunch prepare_launch(const PlanOptions& options, std::vector<std::string> command,
                              const Context& context);

// --dry-run: writes the hostfile the plan names, prints the plan (text or JSON).
int print_plan(const PlanOptions& options, const PreparedLaunch& prepared);

// Before a run: throws Error(not_found) when the launcher's program is another implementation
// than the dialect needs; warns about what it will refuse (Open MPI as root).
void check_launcher_program(const PreparedLaunch& prepared, const Context& context);

// Runs the plan; returns the launcher's exit status (128+N for signal N).
int run_plan(const PreparedLaunch& prepared, const Context& context);

}  // namespace ezpz
