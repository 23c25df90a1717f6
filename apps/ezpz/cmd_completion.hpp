#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"

namespace ezpz {

struct CompletionOptions {
  std::string shell;  // completion SHELL: bash or zsh
  CLI::App* completion = nullptr;
  CLI::App* man = nullptr;
};

// Declares `ezpz completion SHELL` and the unlisted `ezpz man` (the build writes
// share/man/man1/ezpz.1 with it).
void setup_completion(CLI::App& app, CompletionOptions& options, GlobalOptions& globals);

// Whether one of them was asked for.
bool completion_parsed(const CompletionOptions& options);

// Prints the completion script or the man page for every command under `root`.
int run_completion(const CompletionOptions& options, const CLI::App& root);

}  // namespace ezpz
