#pragma once
#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct EnvOptions {
  PlanOptions plan;  // the same choices as ezpz launch: -n, --ppn, --machine, --hostfile ...
};

// Declares `ezpz env` on `app`.
CLI::App* setup_env(CLI::App& app, EnvOptions& options, GlobalOptions& globals);

// Plans a launch as ezpz launch would, writes its hostfile, prints the variables.
int run_env(const EnvOptions& options, const Context& context);

}  // namespace ezpz
