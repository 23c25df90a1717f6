#pragma once
// What every subcommand gets from main: the world, gathered once.
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"

namespace ezpz {

struct Context {
  Env env;               // the process environment, captured once
  std::string self_dir;  // directory of the ezpz binary: helpers are found from it (bundled.hpp)
  bool color = false;    // colour what goes to stdout (--color, NO_COLOR, a terminal)
  // The words after the first "--", never parsed: the command of launch and submit, more
  // trainer flags for test.
  std::optional<std::vector<std::string>> after_double_dash{};
};

}  // namespace ezpz
