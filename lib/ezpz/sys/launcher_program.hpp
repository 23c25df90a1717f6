#pragma once
// Which program runs the launcher: the dialect's candidates (or the one the user named),
// searched on PATH, each known by its `--version`, asked once per program file: the answer is
// cached under ezpz_cache_dir(), keyed by the path and the file's stat, so a launch costs a
// stat and one small read.
#include <optional>
#include <string>
#include <string_view>

#include "ezpz/core/env.hpp"
#include "ezpz/launchers/launcher_identity.hpp"

namespace ezpz::sys {

// The program the user named, else the dialect's candidates, on env's PATH. Never throws: a
// cache that cannot be read or written is skipped.
LauncherProgramChoice resolve_launcher_program(std::string_view dialect,
                                               const std::optional<NamedProgram>& named,
                                               const Env& env);

}  // namespace ezpz::sys
