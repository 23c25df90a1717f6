#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct SubmitOptions {
  std::optional<std::string> scheduler;  // pbs or slurm; else detected
  long nodes = 1;
  CLI::Option* nodes_option = nullptr;  // whether -N was given
  PlanOptions layout;                   // -n/--ppn only, for the job's `ezpz launch`
  std::optional<std::string> time;
  std::optional<std::string> queue;
  std::optional<std::string> account;
  std::optional<std::string> job_name;
  std::optional<std::string> filesystems;
  std::optional<std::string> output;
  std::optional<std::string> machine;
  std::vector<std::string> launch_args;  // --launch-arg, for `ezpz launch` in the job
  bool dry_run = false;
  std::optional<std::string> script_out;
  std::vector<std::string> stray;  // words before "--" that are not options
};

// Declares `ezpz submit` and its options on `app`.
CLI::App* setup_submit(CLI::App& app, SubmitOptions& options, GlobalOptions& globals);

// Writes the batch script; prints it (--dry-run) or submits it and prints the
// job id. Returns qsub's/sbatch's exit status, 0 for --dry-run.
int run_submit(const SubmitOptions& options, const Context& context);

}  // namespace ezpz
