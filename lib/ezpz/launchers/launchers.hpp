#pragma once
// Launcher dialects: how each launcher spells ranks, ranks per host, hosts,
// environment and CPU binding. Differences are rows of launcher_table.hpp.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/launchers/binding.hpp"
#include "ezpz/launchers/launcher_table.hpp"
#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

// Everything a dialect needs to build its command line.
struct LauncherInput {
  int world_size = 1;
  int ppn = 1;
  std::vector<std::string> hosts;  // exactly the hosts used
  std::string hostfile;            // a file listing `hosts`; empty: this host alone, or none
  CoreBinding cpu_bind;            // spelled in the dialect by binding.cpp
  std::vector<std::string> exported;  // variables ezpz sets, for launchers that need -x NAME
  std::string master_addr;            // torchrun rendezvous
  int master_port = 0;
  // ezpz's own environment: a launcher that forwards variables by name (Open MPI's -x) is
  // given only those that exist, as Open MPI warns on every run about one that does not.
  Env environment;
  // Each line must reach ezpz whole: ezpz-rankenv's rank records (issue 18), or the lines of
  // ezpz's own node step (kill --all-nodes: srun -u merged two nodes' lines mid-line). A flag
  // that would cut them is left out.
  bool whole_lines = false;
  // ezpz's own one-per-node step (kill, stacks, doctor, yeet): the row's `overlap` flag is added.
  bool node_step = false;
};

// An implementation ezpz knows ("Open MPI") and the dialect whose flags it takes ("openmpi").
struct FoundFlavour {
  std::string_view name;
  std::string_view dialect;
};

// The row of a dialect, by its name or one users type for it; nullptr for an unknown name.
const LauncherRow* launcher_row(std::string_view name);

// The names of all dialects, for messages: "pals, hydra, openmpi, srun, flux, torchrun, aprun".
std::string known_launchers();
// A dialect's name or one users type for it ("mpich", "ompi").
bool is_known_launcher(std::string_view name);
// The dialect a name means: "mpich" and "hydra" are "hydra", "ompi" is "openmpi"; an unknown
// name is returned as it is, for the caller's error to name.
std::string canonical_launcher(std::string_view name);

// The programs that may be the dialect's launcher, in the order they are tried: the first is
// the default name, the others the names distributions give it beside another MPI
// (Debian's mpiexec.hydra, mpirun.openmpi). Empty for an unknown dialect.
std::vector<std::string_view> launcher_programs(std::string_view dialect);

// The implementation a dialect needs ("Open MPI"); empty when its program has no identity to
// check (torchrun has no --version worth starting Python for).
std::string_view expected_flavour(std::string_view dialect);

// Where a dialect's launcher comes from, when it is missing.
std::string_view launcher_install_hint(std::string_view dialect);

// The implementation whose `--version` output this is; nullopt when ezpz knows none.
std::optional<FoundFlavour> find_flavour(std::string_view version_output);

// The implementation of this name ("Intel MPI"); nullopt when ezpz knows none.
std::optional<FoundFlavour> flavour_named(std::string_view name);

// The first dotted number in `text` ("4.0.2", "22.05.8"), or "".
std::string find_version(std::string_view text);

// The dialect of the program at the front of the dialect's command line: torchrun on several
// hosts is started once per host by Hydra's mpiexec.
std::string_view program_dialect(std::string_view dialect, std::size_t nhosts);

// What the dialect's launcher refuses to start without when run as root, and ezpz never sets:
// "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" for Open MPI when either is not
// set to 1 in `env`; empty when none is missing.
std::string missing_root_assignments(std::string_view dialect, const Env& env);

// The launcher's argv, up to (not including) the user's command.
// Throws Error for an unknown dialect name.
std::vector<std::string> launcher_argv(std::string_view dialect, const LauncherInput& input);

// Whether the launcher can give each rank its own GPUs itself (srun --gpus-per-task).
bool launcher_binds_gpus(std::string_view dialect);

// The launcher's flags that give each rank `gpus_per_rank` GPUs bound by `bind`
// (srun: --gpus-per-task=1 --gpu-bind=closest); empty for a launcher without them.
std::vector<std::string> launcher_gpu_flags(std::string_view dialect, int gpus_per_rank,
                                            const std::string& bind);

// Whether the launcher takes its hosts from a hostfile (srun and flux take a hostlist).
bool launcher_takes_hostfile(std::string_view dialect);

// Whether the launcher sets RANK & co. itself (torchrun), so ezpz-rankenv is not needed.
bool launcher_sets_rank_env(std::string_view dialect);
// Whether ezpz-rankenv's rank records reach ezpz whole under it: not under torchrun (no
// ezpz-rankenv) nor Open MPI (LauncherRow::cuts_records).
bool launcher_keeps_records(std::string_view dialect);

// Whether the launcher can put fewer ranks on the last host (-n 3 at 2 per host):
// all but torchrun, whose --nproc_per_node is one count for every host, and flux, whose
// --tasks-per-node is too (flux-run(1) refuses -n beside it).
bool launcher_fills_in_order(std::string_view dialect);

}  // namespace ezpz
