#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct LaunchOptions {
  long nprocs = 0;
  long ppn = 0;
  long nhosts = 0;
  std::optional<std::string> hostfile;
  std::vector<std::string> exclude;
  std::optional<std::string> exclude_file;
  std::optional<std::string> machine;
  std::optional<std::string> scheduler;
  std::optional<std::string> launcher;
  std::optional<std::string> cpu_bind;
  std::vector<std::string> env;
  std::vector<std::string> launcher_args;
  bool no_rank_env = false;
  bool dry_run = false;
  bool json = false;
  std::vector<std::string> command;  // words from the first non-option word, before any "--"
  std::optional<std::vector<std::string>> after_double_dash;
  // Which of -n/--ppn/--nhosts were given (0 is a value to reject, not "unset").
  CLI::Option* nprocs_option = nullptr;
  CLI::Option* ppn_option = nullptr;
  CLI::Option* nhosts_option = nullptr;
};

// Declares `ezpz launch` and its options on `app`.
CLI::App* setup_launch(CLI::App& app, LaunchOptions& options, GlobalOptions& globals);

// Gathers, plans, then prints or runs. Returns ezpz's exit status.
int run_launch(const LaunchOptions& options, const Context& context);

}  // namespace ezpz
