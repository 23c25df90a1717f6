#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "ezpz/supervise/kill.hpp"
#include "options.hpp"

namespace ezpz {

struct KillOptions {
  std::string run_id;  // empty: this job's runs (--job, or the job we are in), or --all
  std::string job;     // --job: only the runs of this scheduler job
  bool all = false;    // --all: every ezpz run of this user
  std::string signal = "TERM";
  double grace_seconds = kill::k_grace_seconds;
  bool dry_run = false;
  bool all_nodes = false;
  bool on_node = false;  // set by --all-nodes for the copy on each node
  bool ranks_only = false;  // the run's ranks only, signalled once (launch --signal's step)
};

// Declares `ezpz kill` on `app`.
CLI::App* setup_kill(CLI::App& app, KillOptions& options, GlobalOptions& globals);

// Signals the processes ezpz started, here or on every node of the allocation.
int run_kill(const KillOptions& options, const Context& context);

// launch --signal's node step: `signal` to run `run_id`'s ranks on every node, once, with no
// grace and no SIGKILL (the ranks must survive a warning), and never to a launcher (most die of
// a signal they do not handle). Says what each node did; true when a rank was signalled.
bool signal_ranks_everywhere(const std::string& run_id, int signal, const Context& context);

}  // namespace ezpz
