#pragma once
// `ezpz stacks RUN_ID`: what every rank of a running job is doing, taken on every node through
// the launcher (as `ezpz kill --all-nodes` reaches them), without stopping it. The same capture
// runs when --idle-timeout fires, before the job is stopped, and when ezpz gets SIGQUIT.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct StacksOptions {
  std::string run_id;
  std::optional<std::string> runs_dir;  // --runs-dir: where the run's record is
  bool on_node = false;                 // the per-node copy the capture starts
};

CLI::App* setup_stacks(CLI::App& app, StacksOptions& options, GlobalOptions& globals);

int run_stacks(const StacksOptions& options, const Context& context);

// Takes the stacks of every rank of `run_id` through the launcher, one ezpz per node, writes
// them to `directory` (rank-K.txt each, and summary.txt; nothing when empty) and says the
// summary on stderr, "ezpz: " before each line. Returns whether any rank's stack was taken.
bool take_stacks(const std::string& run_id, const std::string& directory, const Context& context);

}  // namespace ezpz
