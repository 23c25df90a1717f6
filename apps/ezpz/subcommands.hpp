#pragma once
// The table of subcommands, as flux-core keeps its table of builtin commands: one
// row per cmd_<name>.cpp, a name with the functions that declare and run it. A new
// subcommand is a new row; main never names one.
#include <functional>
#include <optional>
#include <string>
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

// Where the subcommand is among ezpz's words (reversed, as CommandLine holds them): the index of
// the first word that is neither an option of `root` (the global ones) nor an option's value;
// nullopt when there is none. Both the subcommand to declare and apply_aliases start there.
// Defined in options.cpp, beside the option helpers it uses.
std::optional<std::size_t> subcommand_index(const CLI::App& root,
                                            const std::vector<std::string>& reversed_words);

// The one subcommand a command line needs declared: the word at subcommand_index (asked of
// `root` with only its global options declared), when it names a row other than completion
// and man, which document every row. Declaring CLI11's options is most of ezpz's start-up
// (3.7 M of the 6.8 M instructions of `ezpz launch -- /bin/true`, callgrind), so
// a launch declares only `launch`. nullopt: declare them all (ezpz --help, a typo).
std::optional<std::string_view> lone_subcommand(const CLI::App& root,
                                                const std::vector<std::string>& reversed_words);

// Declares every subcommand on `root` (only `only`, when given), in the table's
// order: the order --help, the completions and the man page list them.
std::vector<Declared> declare_subcommands(CLI::App& root, GlobalOptions& globals,
                                          std::optional<std::string_view> only = std::nullopt);

// The exit status of the subcommand that was parsed; nullopt when none was.
std::optional<int> run_parsed(const std::vector<Declared>& declared, const Context& context);

}  // namespace ezpz
