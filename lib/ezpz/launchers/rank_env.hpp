#pragma once
// The torch env:// contract for one rank, mapped from whatever its launcher
// set. Used by ezpz-rankenv, which runs once per rank, so this file depends on
// nothing but the standard library.
#include <optional>
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
// With a GPU placement in the plan, the rank's masks follow (gpu_masks).
// LOCAL_WORLD_SIZE is this host's own count where the launcher says it per
// host (Hydra, PALS, Open MPI, and srun's SLURM_STEP_TASKS_PER_NODE list):
// the last host of `-n 3 --ppn 2` holds 1 rank, not 2.
std::vector<std::pair<std::string, std::string>> map_rank_env(std::string_view launcher,
                                                              EnvLookup lookup);

// The GPU placement ezpz-rankenv applies (lib/ezpz/launch/placement.hpp): each local rank's
// devices ("3;2;1;0"; a rank's own joined by commas) and the variables to set to them
// ("CUDA_VISIBLE_DEVICES").
inline constexpr const char* k_gpu_masks_variable = "EZPZ_GPU_MASKS";
inline constexpr const char* k_gpu_variables_variable = "EZPZ_GPU_VARIABLES";
// The torch device index of a rank's first device, among those it sees: 0 once it sees only
// its own (Frontier's documentation says the same), whoever masked them.
inline constexpr const char* k_local_device_variable = "EZPZ_LOCAL_DEVICE";

// This rank's masks: each of EZPZ_GPU_VARIABLES set to the entry of EZPZ_GPU_MASKS for
// `local_rank` (taken modulo the entries: a launcher argument that put more ranks on a host
// than planned shares GPUs rather than leaving a rank none). Empty when the plan placed none.
std::vector<std::pair<std::string, std::string>> gpu_masks(std::string_view local_rank,
                                                           EnvLookup lookup);
// The entry of `masks` (EZPZ_GPU_MASKS's value) that local rank `local_rank` takes, modulo the
// entries as above: what ezpz-rankenv sets, and what the runtime reads to see ranks share a GPU.
std::string_view gpu_mask_entry(std::string_view masks, std::size_t local_rank);

// The count for host `node` (from 0) in Slurm's per-node list "2(x3),1";
// nullopt when the list is malformed or shorter.
std::optional<int> tasks_on_node(std::string_view list, int node);

// The name of this rank's host as ezpz's host list has it: the one the
// launcher placed it by (Hydra's MPIR_CVAR_CH3_INTERFACE_HOSTNAME, srun's
// SLURMD_NODENAME), else `fallback` (gethostname's).
std::string rank_host(std::string_view launcher, EnvLookup lookup, std::string_view fallback);

// What ezpz-rankenv writes on its stderr when its rank fails on its own, and
// ezpz reads back from the output to name the rank (lib/ezpz/supervise/attempts.cpp):
// "ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code 1",
// "ezpz-rankenv: rank 3 (pid 7310) on n02: killed by signal 11 (SIGSEGV)". `pid` is
// ezpz-rankenv's own, the one the launcher knows; `status` is waitpid's.
inline constexpr std::string_view k_exit_report_prefix = "ezpz-rankenv: ";
std::string exit_report(std::string_view rank, long pid, std::string_view host, int status);
// The status a line of exit_report's carries, as a shell gives it: the code, or 128+N for
// signal N; nullopt when `line` is no such report.
std::optional<int> exit_report_status(std::string_view line);

}  // namespace ezpz
