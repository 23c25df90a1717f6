#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attempt_loop.hpp"
#include "context.hpp"
#include "ezpz/smoke/smoke_flags.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct TestOptions {
  PlanOptions plan;
  AttemptOptions attempts;
  smoke::SmokeOptions trainer;             // the trainer's flags given before "--" (to accept them)
  std::vector<std::string> trainer_words;  // those flags again, as words for the trainer
  std::vector<std::string> extras;         // words neither ezpz nor the trainer knows
  std::vector<std::string> compare;        // --compare A [B]: summaries (or their directories)
};

// Declares `ezpz test` on `app`: launch's options, its supervision options and the
// trainer's flags, in any order.
CLI::App* setup_test(CLI::App& app, TestOptions& options, GlobalOptions& globals);

// Checks the trainer's flags, launches ezpz-smoke through the launch planner, then
// prints the verdict.
int run_test(const TestOptions& options, const Context& context);

}  // namespace ezpz
