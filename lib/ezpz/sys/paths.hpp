#pragma once
// Resolving a path as the kernel will walk it, for yeet's guards on where a
// copy may go (the decisions are in ezpz/stage/yeet.hpp).
#include <string>

#include "ezpz/stage/yeet.hpp"

namespace ezpz::sys {

// `path` (absolute, lexically normal) with the symlinks in what exists of it
// resolved, and the identity of "/" and each existing ancestor. With
// `follow_last` false the last component is taken as named, not followed:
// it is what a rename replaces (a symlink at DST is swapped, not its target).
yeet::ResolvedPath resolve_path(const std::string& path, bool follow_last);

}  // namespace ezpz::sys
