// `ezpz doctor`'s "gpus" check: the GPU placement `ezpz launch` would use on this node, from
// the same rules (layout's ranks per host, placement.cpp's GPUs, binding.hpp's cores), next to
// the GPUs a vendor tool lists here; and its "libraries" check: the libraries the site puts on
// LD_LIBRARY_PATH for its GPUs' network (the profile's `libraries`) are there.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/doctor/doctor_checks.hpp"
#include "ezpz/launch/layout.hpp"
#include "ezpz/launch/placement.hpp"
#include "ezpz/launchers/binding.hpp"
#include "ezpz/launchers/launchers.hpp"

namespace ezpz::doctor {
namespace {

constexpr std::string_view k_gpus = "gpus";
constexpr std::string_view k_driver_remedy =
    "run ezpz doctor on a compute node of the job; check the driver (nvidia-smi, rocm-smi, "
    "xpu-smi)";

// "0-7", "1-8,53-60", "4": a rank's cores as runs.
std::string core_runs(const std::vector<int>& cores) {
  std::vector<std::string> runs;
  for (std::size_t first = 0, last = 0; first < cores.size(); first = ++last) {
    while (last + 1 < cores.size() && cores[last + 1] == cores[last] + 1) ++last;
    runs.push_back(first == last ? std::to_string(cores[first])
                                 : fmt::format("{}-{}", cores[first], cores[last]));
  }
  return fmt::format("{}", fmt::join(runs, ","));
}

// "local rank 0: GPU 3, cores 0-7; 1: GPU 2, cores 8-15; ..."
std::string describe_ranks(const GpuPlacement& gpus, const CoreBinding& binding) {
  std::vector<std::string> ranks;
  for (std::size_t rank = 0; rank < gpus.local.size(); ++rank) {
    const std::vector<std::string>& devices = gpus.local[rank];
    std::string cores = rank < binding.cores.size() && !binding.cores[rank].empty()
                            ? "cores " + core_runs(binding.cores[rank])
                            : "cores not bound";
    ranks.push_back(fmt::format("{}{}: GPU{} {}, {}", rank == 0 ? "local rank " : "", rank,
                                devices.size() == 1 ? "" : "s", fmt::join(devices, ","), cores));
  }
  return fmt::format("{}", fmt::join(ranks, "; "));
}

// "4 GPUs found here, profile polaris has 4"; "only 2 of profile polaris's 4 GPUs found here".
std::string describe_found(const Snapshot& s, const MachineProfile& p) {
  const int found = s.accelerators.value_or(0);
  if (found < p.gpus_per_node) {
    return fmt::format("only {} of profile {}'s {} GPUs found here", found, p.name,
                       p.gpus_per_node);
  }
  const std::string here = found == 0 ? std::string("no GPUs found here")
                                      : fmt::format("{} found here", plural(found, "GPU"));
  if (p.gpus_per_node == 0) return here;
  return fmt::format("{}, profile {} has {}", here, p.name, p.gpus_per_node);
}

// The ranks per host `ezpz launch` would start here, by the same rule and in the same order.
SlotsPerHost ranks_per_host(const Snapshot& s, const MachineProfile& p) {
  return default_slots_per_host(s.env, s.allocation.value_or(Allocation{}), p.gpus_per_node, p.name,
                                [&s] { return s.accelerators; });
}

GpuPlacement placement_here(const Snapshot& s, const Derived& d, int ppn) {
  return place_gpus({.profile = *d.profile,
                     .launcher = d.launcher,
                     .ppn = ppn,
                     .launcher_binds = launcher_binds_gpus(d.launcher),
                     .ranks_wrapped = !launcher_sets_rank_env(d.launcher),
                     .environment = s.env},
                    GpuRequest{});
}

// A mask the user set that the placement would have to work within, e.g. "CUDA_VISIBLE_DEVICES".
std::string user_mask_variable(const Snapshot& s, const MachineProfile& p) {
  std::vector<std::string> variables =
      p.gpu_bind.variables.empty() ? device_mask_variables(p.device) : p.gpu_bind.variables;
  for (const std::string& name : variables) {
    if (get_nonempty(s.env, name)) return name;
  }
  return "";
}

CheckResult unplaceable(const Snapshot& s, const MachineProfile& p, const std::string& head,
                        const std::string& why) {
  const std::string mask = user_mask_variable(s, p);
  return result(k_gpus, Status::warn, fmt::format("{}: {}", head, why),
                mask.empty() ? "run fewer ranks per host (--ppn), or pass --no-gpu-bind"
                             : fmt::format("set {} to a device for every rank, run fewer ranks "
                                           "per host (--ppn), or unset it",
                                           mask));
}

// Fewer GPUs here than the profile says. (Ranks per host beyond the profile's GPUs are
// place_gpus()'s to refuse: gpu_bind.order names exactly gpus_per_node devices.)
std::optional<CheckResult> short_of_gpus(const Snapshot& s, const MachineProfile& p,
                                         const std::string& message) {
  if (s.accelerators.value_or(0) >= p.gpus_per_node) return std::nullopt;
  return result(k_gpus, Status::warn, message, std::string(k_driver_remedy));
}

// "...; 1 GPU per rank from ...: local rank 0: GPU 3, cores 0-7; ..."; the rule alone when
// devices are left alone.
std::string describe_placement(const MachineProfile& p, const GpuPlacement& gpus, int ppn) {
  if (gpus.by == GpuPlacement::By::none) return gpus.rule;
  const CoreBinding binding = profile_core_binding(p.cpu_bind, ppn, gpus.gpus_per_rank);
  return fmt::format("{}: {}", gpus.rule, describe_ranks(gpus, binding));
}

}  // namespace

CheckResult check_gpus(const Snapshot& s, const Derived& d) {
  if (!d.profile) return result(k_gpus, Status::ok, "no machine profile applies: nothing to place");
  const MachineProfile& p = *d.profile;
  const std::string found = describe_found(s, p);
  SlotsPerHost slots;
  try {
    slots = ranks_per_host(s, p);
  } catch (const Error& error) {
    return result(k_gpus, Status::warn, fmt::format("{}; {}", found, error.what()),
                  "fix the variable named here: ezpz launch stops at it too");
  }
  const std::string head =
      fmt::format("{}; {} per host ({})", found, plural(slots.count, "rank"), slots.source);
  GpuPlacement gpus;
  try {
    gpus = placement_here(s, d, slots.count);
  } catch (const Error& error) {
    return unplaceable(s, p, head, error.what());
  }
  const std::string message = fmt::format("{}; {}", head, describe_placement(p, gpus, slots.count));
  return short_of_gpus(s, p, message).value_or(result(k_gpus, Status::ok, message));
}

namespace {

constexpr std::string_view k_libraries = "libraries";

// The LD_LIBRARY_PATH directory that holds `library`, as the probe found it; "" when none does.
std::string found_in(const Snapshot& s, const std::string& library) {
  auto where = std::find_if(s.libraries_found.begin(), s.libraries_found.end(),
                            [&](const auto& entry) { return entry.first == library; });
  return where == s.libraries_found.end() ? "" : where->second;
}

}  // namespace

CheckResult check_libraries(const Snapshot& s, const Derived& d) {
  if (!d.profile) return result(k_libraries, Status::ok, "no machine profile applies");
  const MachineProfile& p = *d.profile;
  if (p.libraries.empty())
    return result(k_libraries, Status::ok, fmt::format("profile {} names none", p.name));
  std::vector<std::string> found, missing, directories;
  for (const auto& [library, directory] : p.libraries) {
    if (std::string dir = found_in(s, library); !dir.empty()) {
      found.push_back(fmt::format("{} in {}", library, dir));
      continue;
    }
    missing.push_back(fmt::format("{} (profile {} has it from {})", library, p.name, directory));
    directories.push_back(directory);
  }
  if (missing.empty())
    return result(k_libraries, Status::ok, fmt::format("{}", fmt::join(found, "; ")));
  return result(k_libraries, Status::warn,
                fmt::format("not in any LD_LIBRARY_PATH directory: {}", fmt::join(missing, "; ")),
                fmt::format("export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH (the profile says why)",
                            fmt::join(directories, ":")));
}

}  // namespace ezpz::doctor
