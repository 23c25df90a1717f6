#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct TestOptions {
  PlanOptions plan;
  std::vector<std::string> trainer_args;  // everything ezpz does not know: the trainer's flags
  std::optional<std::vector<std::string>> after_double_dash;
};

// Declares `ezpz test` on `app`.
CLI::App* setup_test(CLI::App& app, TestOptions& options, GlobalOptions& globals);

// Launches ezpz-smoke through the launch planner, then prints the verdict.
int run_test(const TestOptions& options, const Context& context);

}  // namespace ezpz
