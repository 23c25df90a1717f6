#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct CompletionOptions {
  std::string shell;               // completion SHELL: bash or zsh
  const CLI::App* root = nullptr;  // every command, read for their options
};

struct ManOptions {
  const CLI::App* root = nullptr;
};

// Declares `ezpz completion SHELL`.
CLI::App* setup_completion(CLI::App& app, CompletionOptions& options, GlobalOptions& globals);

// Prints the completion script for every command under the root.
int run_completion(const CompletionOptions& options, const Context& context);

// Declares the unlisted `ezpz man` (the build writes share/man/man1/ezpz.1 with it).
CLI::App* setup_man(CLI::App& app, ManOptions& options, GlobalOptions& globals);

// Prints the man page for every command under the root.
int run_man(const ManOptions& options, const Context& context);

}  // namespace ezpz
