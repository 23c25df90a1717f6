#pragma once
// Which GPUs each local rank gets. Pure: the profile's gpu_bind, the ranks per host, the
// user's --gpus-per-rank/--no-gpu-bind and a mask already set in the job decide. The launcher
// binds where its row has a GPU flag and the profile names its binding (srun
// --gpu-bind=closest); otherwise ezpz-rankenv sets each rank's masks (rank_env.cpp).
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

struct GpuRequest {
  int gpus_per_rank = 1;  // --gpus-per-rank
  bool bind = true;       // false: --no-gpu-bind
  bool given = false;     // --gpus-per-rank was given
};

struct GpuPlacement {
  enum class By { none, masks, launcher };
  By by = By::none;
  std::vector<std::string> variables{};           // by masks: what ezpz-rankenv sets
  std::vector<std::vector<std::string>> local{};  // each local rank's devices (none: empty)
  int gpus_per_rank = 1;
  std::string launcher_bind{};  // by launcher: the value of its GPU binding flag
  std::string rule{};           // which rule decided, for -v and --dry-run --json
  bool operator==(const GpuPlacement&) const = default;
};

// What the placement needs to know of the launch.
struct PlacementInputs {
  const MachineProfile& profile;
  std::string_view launcher;  // the dialect, for messages
  int ppn = 1;
  bool launcher_binds = false;  // the launcher's row has GPU flags
  bool ranks_wrapped = true;    // ezpz-rankenv runs under each rank (not torchrun, --no-rank-env)
  const Env& environment;       // a mask the user set in the job
};

// Throws Error when the ranks per host cannot each have their GPUs (one sentence, naming
// what to pass instead).
GpuPlacement place_gpus(const PlacementInputs& in, const GpuRequest& request);

// The mask variables of a device kind: "cuda" -> CUDA_VISIBLE_DEVICES; empty for none.
std::vector<std::string> device_mask_variables(std::string_view device);

// What the plan exports for the placement (ezpz-rankenv's inputs and EZPZ_LOCAL_DEVICE).
EnvList placement_env(const GpuPlacement& placement);

}  // namespace ezpz
