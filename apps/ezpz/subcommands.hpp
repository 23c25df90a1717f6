#pragma once
// The table of subcommands, as flux-core keeps its table of builtin commands: one
// row per cmd_<name>.cpp, a name with the functions that declare and run it. A new
// subcommand is a new row; main never names one.
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

// One subcommand on the root app, its options bound for as long as this lives.
struct Declared {
  CLI::App* app = nullptr;
  std::function<int(const Context&)> run;  // once `app` is the command parsed
};

struct Subcommand {
  std::string_view name;  // `ezpz <name>`, as its setup declares it
  Declared (*declare)(CLI::App& root, GlobalOptions& globals);
};

// Declares every subcommand on `root`, in the table's order: the order --help, the
// completions and the man page list them.
std::vector<Declared> declare_subcommands(CLI::App& root, GlobalOptions& globals);

// The exit status of the subcommand that was parsed; nullopt when none was.
std::optional<int> run_parsed(const std::vector<Declared>& declared, const Context& context);

}  // namespace ezpz
