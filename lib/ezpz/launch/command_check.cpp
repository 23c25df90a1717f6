#include "ezpz/launch/command_check.hpp"

#include <vector>

#include <fmt/format.h>

namespace ezpz {
namespace {

// What the user probably meant: the file beside them, or the script run by Python.
std::string hint(const CommandLookup& c, bool has_slash) {
  std::vector<std::string> choices;
  if (c.in_current_dir && !has_slash) choices.push_back("./" + c.word);
  if (c.word.ends_with(".py")) choices.push_back("python3 " + c.word);
  if (choices.empty()) return "";
  return fmt::format("; did you mean {}?", fmt::join(choices, " or "));
}

}  // namespace

std::optional<std::string> command_problem(const CommandLookup& c) {
  if (c.runnable) return std::nullopt;
  const bool has_slash = c.word.find('/') != std::string::npos;
  if (!has_slash)
    return fmt::format("{}: command not found on the ranks' PATH{}", c.word, hint(c, false));
  if (!c.exists) return fmt::format("{}: no such file", c.word);
  return fmt::format("{}: not an executable file{}", c.word, hint(c, true));
}

}  // namespace ezpz
