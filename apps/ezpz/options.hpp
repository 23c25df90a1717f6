#pragma once
// Options every subcommand shares, and how errors reach the user.
#include <CLI/CLI.hpp>

#include "ezpz/env.hpp"
#include "ezpz/error.hpp"

namespace ezpz {

struct GlobalOptions {
  int verbose = 0;
  bool quiet = false;
};

// -v/--verbose (repeatable), -q/--quiet, --version.
void setup_globals(CLI::App& app, GlobalOptions& options);

// Sets the log level: -q > -v > EZPZ_LOG_LEVEL > warn. Throws Error for a bad
// EZPZ_LOG_LEVEL.
void apply_globals(const GlobalOptions& options, const Env& env);

// "ezpz: error: <message>" on stderr; returns the exit status to use.
int report_error(const Error& error);
int report_usage_error(const CLI::ParseError& error);

}  // namespace ezpz
