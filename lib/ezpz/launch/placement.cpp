#include "ezpz/launch/placement.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz {
namespace {

// The variable each vendor's runtime reads to hide devices from a process: CUDA's; ROCm's
// runtime below HIP (so HIP and OpenCL alike obey it); Level Zero's, which takes GPU.tile.
struct DeviceMasks {
  std::string_view device;
  std::string_view variable;
};
constexpr std::array<DeviceMasks, 3> k_device_masks = {{
    {"cuda", "CUDA_VISIBLE_DEVICES"},
    {"rocm", "ROCR_VISIBLE_DEVICES"},
    {"xpu", "ZE_AFFINITY_MASK"},
}};

std::vector<std::string> mask_variables(const MachineProfile& profile) {
  if (!profile.gpu_bind.variables.empty()) return profile.gpu_bind.variables;
  return device_mask_variables(profile.device);
}

// The mask the user set in the job: the first of the variables that is set.
std::optional<EnvList::value_type> user_mask(const std::vector<std::string>& variables,
                                             const Env& environment) {
  for (const std::string& name : variables) {
    if (auto value = get_nonempty(environment, name)) return EnvList::value_type{name, *value};
  }
  return std::nullopt;
}

// The devices ranks may have, in local-rank order, and where they come from.
struct Usable {
  std::vector<std::string> devices;
  std::string source;     // "machine profile polaris", "CUDA_VISIBLE_DEVICES=1,3"
  bool narrowed = false;  // by a mask of the user's: only masks keep within it
};

// Slurm sets the masks of a batch script to the job's GPUs (SLURM_JOB_GPUS, the same list):
// not a user's choice, and srun's own binding keeps within them.
bool set_by_slurm(const EnvList::value_type& mask, const Env& environment) {
  return get_nonempty(environment, "SLURM_JOB_GPUS") == mask.second;
}

// Within a mask: the profile's (NUMA) order for the devices the mask names, when it names only
// the profile's devices; else the mask's own order. A mask naming them all changes nothing.
Usable usable_devices(const PlacementInputs& in, const std::vector<std::string>& variables) {
  const std::vector<std::string>& order = in.profile.gpu_bind.order;
  const Usable profile{order, fmt::format("machine profile {}", in.profile.name)};
  auto mask = user_mask(variables, in.environment);
  if (!mask) return profile;
  std::vector<std::string> named;
  for (std::string_view id : split(mask->second, ',')) named.emplace_back(id);
  const auto in_mask = [&](const std::string& id) {
    return std::find(named.begin(), named.end(), id) != named.end();
  };
  const bool slurm = set_by_slurm(*mask, in.environment);
  std::string source = fmt::format("{}={}{}", mask->first, mask->second, slurm ? " (Slurm's)" : "");
  const auto known = [&](const std::string& id) {
    return std::find(order.begin(), order.end(), id) != order.end();
  };
  if (!std::all_of(named.begin(), named.end(), known)) return {named, source, !slurm};
  if (std::all_of(order.begin(), order.end(), in_mask)) return profile;
  std::vector<std::string> kept;
  std::copy_if(order.begin(), order.end(), std::back_inserter(kept), in_mask);
  return {kept, source, !slurm};
}

std::vector<std::vector<std::string>> own_gpus(const std::vector<std::string>& devices, int ppn,
                                               int per_rank) {
  std::vector<std::vector<std::string>> local;
  for (int rank = 0; rank < ppn; ++rank) {
    auto first = devices.begin() + static_cast<long>(rank) * per_rank;
    local.emplace_back(first, first + per_rank);
  }
  return local;
}

// Consecutive ranks share a GPU: their cores, bound in rank order, are neighbours too.
std::vector<std::vector<std::string>> shared_gpus(const std::vector<std::string>& devices,
                                                  int ppn) {
  const int sharing = ppn / static_cast<int>(devices.size());
  std::vector<std::vector<std::string>> local;
  for (int rank = 0; rank < ppn; ++rank) local.push_back({devices[rank / sharing]});
  return local;
}

bool may_share(const Usable& usable, int ppn, const GpuRequest& request, int ranks_per_gpu) {
  const int count = static_cast<int>(usable.devices.size());
  return request.gpus_per_rank == 1 && count > 0 && ppn % count == 0 &&
         ppn / count <= ranks_per_gpu;
}

std::vector<std::vector<std::string>> assign(const Usable& usable, const PlacementInputs& in,
                                             const GpuRequest& request) {
  const long need = static_cast<long>(in.ppn) * request.gpus_per_rank;
  if (need <= static_cast<long>(usable.devices.size())) {
    return own_gpus(usable.devices, in.ppn, request.gpus_per_rank);
  }
  if (may_share(usable, in.ppn, request, in.profile.gpu_bind.ranks_per_gpu)) {
    return shared_gpus(usable.devices, in.ppn);
  }
  throw Error(fmt::format(
      "{} per host at {} each need {} GPUs, but {} has {}; pass --no-gpu-bind to leave devices "
      "alone",
      plural(in.ppn, "rank"), plural(request.gpus_per_rank, "GPU"), need, usable.source,
      usable.devices.size()));
}

bool ranks_share(const GpuPlacement& placement) {
  const std::vector<std::vector<std::string>>& local = placement.local;
  return local.size() > 1 && local[0] == local[1];
}

std::string layout_words(const GpuPlacement& placement) {
  const std::vector<std::vector<std::string>>& local = placement.local;
  if (!ranks_share(placement))
    return fmt::format("{} per rank", plural(placement.gpus_per_rank, "GPU"));
  return fmt::format("{} ranks per GPU",
                     local.size() / std::set(local.begin(), local.end()).size());
}

// Why devices are left alone, or "" when they are placed.
std::string left_alone(const PlacementInputs& in, const GpuRequest& request) {
  if (!request.bind) return "--no-gpu-bind: devices left alone";
  if (in.profile.gpu_bind.order.empty()) {
    return fmt::format("machine profile {} has no gpu_bind: devices left alone", in.profile.name);
  }
  if (!in.ranks_wrapped && !in.launcher_binds) {
    return fmt::format("{} starts the ranks without ezpz-rankenv: devices left alone", in.launcher);
  }
  return "";
}

// --gpus-per-rank asks for a placement: refused plainly where none can be made.
void refuse_contradictions(const GpuRequest& request, const std::string& why) {
  if (request.gpus_per_rank < 1) {
    throw Error(fmt::format("--gpus-per-rank must be at least 1, got {}", request.gpus_per_rank));
  }
  if (!request.given || why.empty()) return;
  if (!request.bind) throw Error("--gpus-per-rank and --no-gpu-bind contradict each other");
  throw Error(
      fmt::format("--gpus-per-rank {}: {}", request.gpus_per_rank, why.substr(0, why.find(':'))));
}

}  // namespace

std::vector<std::string> device_mask_variables(std::string_view device) {
  for (const DeviceMasks& row : k_device_masks) {
    if (row.device == device) return {std::string(row.variable)};
  }
  return {};
}

namespace {

// The launcher binds where it can and the profile says how (srun's --gpus-per-task gives each
// task its own GPUs: sharing, and a user's mask, are the masks' to do); else ezpz-rankenv sets
// the masks. False: neither can.
bool choose_how(GpuPlacement& placement, const PlacementInputs& in, const Usable& usable,
                const std::vector<std::string>& variables) {
  const std::string& bind = in.profile.gpu_bind.launcher_bind;
  if (in.launcher_binds && !usable.narrowed && !ranks_share(placement) && !bind.empty()) {
    placement.by = GpuPlacement::By::launcher;
    placement.launcher_bind = bind;
  } else if (in.ranks_wrapped) {
    placement.by = GpuPlacement::By::masks;
    placement.variables = variables;
  }
  return placement.by != GpuPlacement::By::none;
}

std::string rule_text(const GpuPlacement& placement, const Usable& usable,
                      std::string_view launcher) {
  const std::string how =
      placement.by == GpuPlacement::By::launcher
          ? fmt::format("{} binds them: {}", launcher, placement.launcher_bind)
          : fmt::format("ezpz-rankenv sets {}", fmt::join(placement.variables, ", "));
  return fmt::format("{} from {}, in order {} ({})", layout_words(placement), usable.source,
                     fmt::join(usable.devices, ","), how);
}

}  // namespace

GpuPlacement place_gpus(const PlacementInputs& in, const GpuRequest& request) {
  const std::string why = left_alone(in, request);
  refuse_contradictions(request, why);
  if (!why.empty()) return {.rule = why};
  const std::vector<std::string> variables = mask_variables(in.profile);
  const Usable usable = usable_devices(in, variables);
  GpuPlacement placement{.local = assign(usable, in, request),
                         .gpus_per_rank = request.gpus_per_rank};
  if (!choose_how(placement, in, usable, variables)) {
    return {.rule = fmt::format(
                "{} starts the ranks without ezpz-rankenv and cannot bind {}: devices left alone",
                in.launcher, usable.source)};
  }
  placement.rule = rule_text(placement, usable, in.launcher);
  return placement;
}

EnvList placement_env(const GpuPlacement& placement) {
  if (placement.by == GpuPlacement::By::none) return {};
  EnvList env;
  if (placement.by == GpuPlacement::By::masks) {
    std::vector<std::string> masks;
    for (const auto& devices : placement.local)
      masks.push_back(fmt::format("{}", fmt::join(devices, ",")));
    env.emplace_back(k_gpu_masks_variable, fmt::format("{}", fmt::join(masks, ";")));
    env.emplace_back(k_gpu_variables_variable,
                     fmt::format("{}", fmt::join(placement.variables, ",")));
  }
  env.emplace_back(k_local_device_variable, "0");
  return env;
}

}  // namespace ezpz
