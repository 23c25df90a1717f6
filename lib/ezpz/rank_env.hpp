#pragma once
// The torch env:// contract for one rank, mapped from whatever its launcher
// set. Used by ezpz-rankenv, which runs once per rank, so this file depends on
// nothing but the standard library.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ezpz {

// Looks up a variable; returns nullptr when unset (like getenv).
using EnvLookup = const char* (*)(const char* name);

// The RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE this rank should see.
// `launcher` (ezpz's dialect name, from EZPZ_LAUNCHER) says whose variables to
// trust first, so a stale PMI_RANK inherited from an outer job cannot win over
// srun's SLURM_PROCID. A contract variable with no source is left out.
std::vector<std::pair<std::string, std::string>> map_rank_env(std::string_view launcher,
                                                              EnvLookup lookup);

}  // namespace ezpz
