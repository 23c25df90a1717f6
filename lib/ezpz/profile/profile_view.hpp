#pragma once
// How `ezpz machines` shows profiles to people. Pure: profiles in, text out.
#include <string>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

// When `profile` applies unless --machine or EZPZ_MACHINE names one:
// "hostname x4* or aurora*", "hostname x3* and PBS_O_HOST=sirius*",
// "fallback for pbs jobs" (a generic profile), "only by name".
std::string match_summary(const MachineProfile& profile);

// NAME  SCHEDULER  LAUNCHER  MATCH  FILE, one row per profile, with a header;
// a file that did not load has MATCH "BROKEN" and its error as FILE.
std::string profiles_table(const LoadedProfiles& loaded);

// The profile as loaded, in the machines/ format, after a comment naming its file:
// every key that is set (cpu_bind always); parse_machine_profile reads it back unchanged.
std::string profile_yaml(const MachineProfile& profile);

}  // namespace ezpz
