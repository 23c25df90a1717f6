#pragma once
// What every subcommand gets from main: the world, gathered once.
#include <string>

#include "ezpz/env.hpp"

namespace ezpz {

struct Context {
  Env env;               // the process environment, captured once
  std::string self_dir;  // directory of the ezpz binary: helpers are found from it (bundled.hpp)
};

}  // namespace ezpz
