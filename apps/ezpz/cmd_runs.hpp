#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct RunsOptions {
  std::optional<std::string> runs_dir;  // --runs-dir; else EZPZ_RUNS_DIR, .ezpz/runs
  int limit = 20;                       // --last
  std::optional<int> old_limit;         // -n: --last's old name (-n is ranks elsewhere)
  std::string show_id;                  // `ezpz runs show [ID|last]`: empty or "last" is the newest
  CLI::App* show = nullptr;
  std::optional<long> rank;               // `show --rank K`: that rank's output
  std::string grep;                       // `--grep TEXT`: only its lines containing TEXT
  std::optional<std::size_t> tail;        // `--tail N`: only its last N lines
  std::optional<int> attempt;             // show/explain `--attempt N`: that attempt (the last)
  std::optional<std::size_t> keep;        // `ezpz runs prune --keep N`
  std::optional<std::string> older_than;  // `--older-than AGE`
  bool dry_run = false;                   // `--dry-run`
  CLI::App* prune = nullptr;
  CLI::App* explain = nullptr;         // `ezpz runs explain [ID|LOGFILE]`
  std::string explain_what;            // the run id (last), or with --machine a log file
  std::optional<std::string> machine;  // `--machine NAME`: explain a saved log
  std::optional<int> exit_status;      // `--exit-status N`: the saved job's status (1)
  bool json = false;                   // `--json`
};

// Declares `ezpz runs` and `ezpz runs show` on `app`.
CLI::App* setup_runs(CLI::App& app, RunsOptions& options, GlobalOptions& globals);

// Lists recent runs, prints one, or prunes old ones.
int run_runs(const RunsOptions& options, const Context& context);

}  // namespace ezpz
