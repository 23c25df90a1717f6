#pragma once
// Launcher dialects: how each launcher spells ranks, ranks per host, hosts,
// environment and CPU binding. Differences are rows in launchers.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/env.hpp"
#include "ezpz/machine_profile.hpp"

namespace ezpz {

// CPU binding for the launcher: a --cpu-bind value and, for depth binding,
// the cores per rank.
struct CpuBindArgs {
  std::string value;  // empty = no binding flag
  int depth = 0;      // > 0: PALS --depth=N
  bool operator==(const CpuBindArgs&) const = default;
};

// Everything a dialect needs to build its command line.
struct LauncherInput {
  int world_size = 1;
  int ppn = 1;
  std::vector<std::string> hosts;  // exactly the hosts used
  std::string hostfile;            // a file listing `hosts`; empty = pass no hosts
  CpuBindArgs cpu_bind;
  std::vector<std::string> exported;  // variables ezpz sets, for launchers that need -x NAME
  std::string master_addr;            // torchrun rendezvous
  int master_port = 0;
};

// The names of all dialects, for messages: "pals, hydra, openmpi, srun, torchrun".
std::string known_launchers();
bool is_known_launcher(std::string_view name);

// The launcher's argv, up to (not including) the user's command.
// Throws Error for an unknown dialect name.
std::vector<std::string> launcher_argv(std::string_view dialect, const LauncherInput& input);

// Whether the launcher takes its hosts from a hostfile (srun takes a hostlist).
bool launcher_takes_hostfile(std::string_view dialect);

// Whether the launcher sets RANK & co. itself (torchrun), so ezpz-rankenv is not needed.
bool launcher_sets_rank_env(std::string_view dialect);

// Whether the launcher can put fewer ranks on the last host (-n 3 at 2 per host):
// all but torchrun, whose --nproc_per_node is one count for every host.
bool launcher_fills_in_order(std::string_view dialect);

// The --cpu-bind value a profile implies for `ppn` ranks per host; empty for none.
// "list" splits each socket's cores (minus reserved ones) into equal blocks,
// ranks spread evenly over sockets: Aurora at 12 ranks gives
// list:1-8:9-16:...:93-100, at 6 ranks list:1-17:18-34:35-51:53-69:70-86:87-103.
CpuBindArgs profile_cpu_bind(const CpuBind& bind, int ppn);

}  // namespace ezpz
