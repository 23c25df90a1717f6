#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct MachinesOptions {
  bool names_only = false;               // list --names: one name per line (completion)
  std::string show_name;                 // show NAME
  std::optional<std::string> scheduler;  // which --scheduler
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* which = nullptr;
};

// Declares `ezpz machines` and its list, show and which on `app`.
CLI::App* setup_machines(CLI::App& app, MachinesOptions& options, GlobalOptions& globals);

// Lists the profiles (the default), prints one, or says which applies here.
int run_machines(const MachinesOptions& options, const Context& context);

}  // namespace ezpz
