#pragma once
// Shell completion and the man page, generated from the same command definitions
// as --help (apps/ezpz/cmd_completion.cpp reads them out of CLI11). Pure: a tree
// of plain descriptions in, script or roff text out.
#include <string>
#include <string_view>
#include <vector>

namespace ezpz::docs {

struct OptionDoc {
  std::vector<std::string> names;  // "-n", "--nprocs": short ones first
  std::string value;               // what it takes ("INT", "TEXT"); empty for a flag
  std::string description;
  bool positional = false;  // a positional argument: names holds its NAME
};

struct CommandDoc {
  std::string name;  // "ezpz" at the root, else the subcommand's word
  std::string description;
  std::string footer;  // examples and notes, as --help prints them
  std::vector<OptionDoc> options;
  std::vector<CommandDoc> subcommands;
  bool takes_command = false;  // launch, test, submit: the words after its options are the user's
};

// What follows [OPTIONS] in a subcommand's usage line, for those whose words after the
// options are not options ("[--] COMMAND [ARGS...]" for launch); empty for the others.
// One table for --help's "Usage:" line and the man page.
std::string_view usage_tail(std::string_view subcommand);

// A bash completion script: subcommands and options at every level, values for
// options that take known words (--machine asks `ezpz machines list --names`),
// files for path options, and nothing after "--" (the user's command is theirs).
std::string bash_completion(const CommandDoc& root);

// The same for zsh (a #compdef function with descriptions).
std::string zsh_completion(const CommandDoc& root);

// ezpz(1) in roff: NAME, SYNOPSIS, DESCRIPTION, one section per subcommand with
// its options and examples, ENVIRONMENT, FILES, EXIT STATUS.
std::string man_page(const CommandDoc& root, const std::string& version);

}  // namespace ezpz::docs
