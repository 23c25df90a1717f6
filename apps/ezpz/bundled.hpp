#pragma once
// The helper programs ezpz launches (ezpz-smoke, ezpz-stager, ...): beside
// the ezpz binary in a build tree, or in ../libexec/ezpz once installed.
#include <string>
#include <string_view>

#include "context.hpp"

namespace ezpz {

// The path of bundled program `name`; throws Error (exit 127) naming where it
// looked and `how_to_build` it when it is in neither place.
std::string find_bundled_program(const Context& context, std::string_view name,
                                 std::string_view how_to_build);

// The path of bundled program `name` without requiring it: where it is, else
// where it would be beside ezpz. For plans that name a helper they may never
// run (ezpz-rankenv under --dry-run or --no-rank-env).
std::string bundled_program_path(const Context& context, std::string_view name);

}  // namespace ezpz
