#pragma once
// Options every subcommand shares, and how errors reach the user.
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"

namespace ezpz {

struct GlobalOptions {
  int verbose = 0;
  bool quiet = false;
  std::string color = "auto";  // --color: auto, always, never
};

// -v/--verbose (repeatable), -q/--quiet, --version.
void setup_globals(CLI::App& app, GlobalOptions& options);

// Sets the log level (-q > -v > EZPZ_LOG_LEVEL > warn) and whether ezpz's stderr lines
// are coloured. Throws Error for a bad EZPZ_LOG_LEVEL.
void apply_globals(const GlobalOptions& options, const Env& env);

// Whether to colour what ezpz writes on stdout (--color, NO_COLOR, a terminal).
bool stdout_color(const GlobalOptions& options, const Env& env);

// argv split at the first "--": ezpz parses the words before it; the words
// after it belong to the user's command and are never parsed.
struct CommandLine {
  std::vector<std::string> ezpz_words;  // reversed, as CLI::App::parse wants them
  std::optional<std::vector<std::string>> after_double_dash;
};
CommandLine split_command_line(int argc, char** argv);

// The spellings users bring from mpiexec, torchrun and the Python ezpz (-np N, -ppn N, -nh N,
// --nproc_per_node N, --nnodes=N ...) made --np, --ppn and --nhosts (CLI11 would read -np 8
// as -n "p"). Only ezpz's own words change: the scan stops where the command begins.
void apply_aliases(const CLI::App& app, CommandLine& line);

// -v/--verbose, -q/--quiet and --color, declared on a subcommand too so they
// may follow it (`ezpz launch -v ...`).
void add_verbosity_flags(CLI::App& app, GlobalOptions& options);

// --color alone, for subcommands where -q means something else (submit).
void add_color_option(CLI::App& app, GlobalOptions& options);

// "ezpz: error: <message>" on stderr; returns the exit status to use.
int report_error(const Error& error);
int report_usage_error(const CLI::ParseError& error);

}  // namespace ezpz
