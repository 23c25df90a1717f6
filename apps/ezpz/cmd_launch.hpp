#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "attempt_loop.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct LaunchOptions {
  PlanOptions plan;
  AttemptOptions attempts;
  bool no_command_check = false;     // --no-command-check
  std::vector<std::string> command;  // words from the first non-option word, before any "--"
};

// Declares `ezpz launch` and its options on `app`.
CLI::App* setup_launch(CLI::App& app, LaunchOptions& options, GlobalOptions& globals);

// Gathers, plans, then prints or runs. Returns ezpz's exit status.
int run_launch(const LaunchOptions& options, const Context& context);

}  // namespace ezpz
