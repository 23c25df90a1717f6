#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct RunsOptions {
  std::optional<std::string> runs_dir;  // --runs-dir; else EZPZ_RUNS_DIR, .ezpz/runs
  int limit = 20;
  std::string show_id;  // `ezpz runs show ID`
  CLI::App* show = nullptr;
};

// Declares `ezpz runs` and `ezpz runs show` on `app`.
CLI::App* setup_runs(CLI::App& app, RunsOptions& options, GlobalOptions& globals);

// Lists recent runs, or prints one.
int run_runs(const RunsOptions& options, const Context& context);

}  // namespace ezpz
