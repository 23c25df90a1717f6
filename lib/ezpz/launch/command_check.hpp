#pragma once
// Whether the user's command can start, judged once by ezpz before the launch: a
// command the ranks cannot find would otherwise fail once per rank, with the
// launcher's words and no hint. Pure: the look-ups are done by the caller.
#include <optional>
#include <string>

namespace ezpz {

// What this node says about the command's first word.
struct CommandLookup {
  std::string word;             // the command's first word, as given
  bool runnable = false;        // on the ranks' PATH, or with a '/': an executable file
  bool exists = false;          // with a '/': there is something at that path
  bool in_current_dir = false;  // without a '/': a file of that name is in the current directory
};

// The one-line error when the command cannot start ("ddp.py: command not found on the
// ranks' PATH; did you mean python3 ddp.py?"); nullopt when it can.
std::optional<std::string> command_problem(const CommandLookup& lookup);

}  // namespace ezpz
