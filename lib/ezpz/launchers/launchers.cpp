#include "ezpz/launchers/launchers.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"

namespace ezpz {
namespace {

// How hosts are handed over: a hostfile path, or a Slurm hostlist expression.
enum class HostsForm { hostfile, hostlist };

struct Dialect {
  std::string_view name{};
  // The programs that may run it, in the order they are tried; the first is the default name.
  std::vector<std::string_view> programs{};
  // The implementations that take these flags; the first is the one messages ask for. None:
  // the program's identity is not checked.
  std::vector<LauncherFlavour> flavours{};
  std::string_view install{};               // where the launcher comes from, when it is missing
  std::vector<std::string_view> leading{};  // fixed flags right after the program
  std::string_view np{};                    // flag for the total ranks
  std::string_view ppn{};                   // flag for ranks per host
  std::string_view nnodes{};                // flag for the host count, if the launcher has one
  std::string_view hosts{};                 // flag naming the hosts
  HostsForm hosts_form{};
  std::string_view cpu_bind{};    // flag taking the binding value
  std::string_view depth{};       // flag taking cores per rank (PALS --depth)
  std::string_view export_var{};  // flag to export one variable (Open MPI's -x)
  // Variables the launcher wants set to 1 before it runs as root (ezpz never sets them).
  std::vector<std::string_view> root_variables{};
};

// A flag ending in '=' or ':' takes its value in the same word ("--np=8",
// "--requires=host:n[1-2]"); others take it as the next word ("-n 8").
void add_flag(std::vector<std::string>& argv, std::string_view flag, const std::string& value) {
  if (flag.empty()) return;
  if (flag.back() == '=' || flag.back() == ':') {
    argv.push_back(fmt::format("{}{}", flag, value));
  } else {
    argv.emplace_back(flag);
    argv.push_back(value);
  }
}

// Cray PALS (Aurora, Polaris): --envall passes ezpz's environment to every rank;
// --line-buffer keeps ranks' lines whole.
// MPICH Hydra passes the environment by default; Open MPI needs -x per variable;
// srun exports the environment by default.
// `--version` markers: a flavour matches when its output holds a marker, rows in order, so
// Hydra (whose output mentions "slurm") comes before Slurm. Open MPI's mpirun names itself
// "Open MPI", its other names (mpirun.openmpi, orterun) "OpenRTE". Unverified: no Cray PALS
// was at hand; its mpiexec is assumed to name itself.
const std::array<Dialect, 6> k_dialects = {{
    {.name = "pals",
     .programs = {"mpiexec"},
     .flavours = {{"Cray PALS", {"PALS"}, "pals"}},
     .install = "load the Cray PALS module (module load cray-pals)",
     .leading = {"--envall", "--line-buffer"},
     .np = "--np=",
     .ppn = "--ppn=",
     .hosts = "--hostfile=",
     .hosts_form = HostsForm::hostfile,
     .cpu_bind = "--cpu-bind=",
     .depth = "--depth="},
    {.name = "hydra",
     .programs = {"mpiexec", "mpiexec.hydra", "mpiexec.mpich"},
     .flavours = {{"MPICH Hydra", {"HYDRA build details"}, "hydra"},
                  {"Intel MPI", {"Intel(R) MPI Library"}, "hydra"}},
     .install = "install MPICH (apt-get install mpich) or load its module",
     .np = "-n",
     .ppn = "-ppn",
     .hosts = "-f",
     .hosts_form = HostsForm::hostfile,
     .cpu_bind = "-bind-to"},
    {.name = "openmpi",
     .programs = {"mpirun", "mpirun.openmpi", "mpiexec.openmpi"},
     .flavours = {{"Open MPI", {"Open MPI", "OpenRTE"}, "openmpi"}},
     .install = "install Open MPI or load its module",
     .np = "-n",
     .ppn = "-N",
     .hosts = "--hostfile",
     .hosts_form = HostsForm::hostfile,
     .cpu_bind = "--bind-to",
     .export_var = "-x",
     .root_variables = {"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"}},
    // --kill-on-bad-exit: one failing rank ends the step instead of leaving the rest hung.
    {.name = "srun",
     .programs = {"srun"},
     // "slurm 23.02.7"; Debian's "slurm-wlm 22.05.8"
     .flavours = {{"Slurm", {"slurm"}, "srun"}},
     .install = "run on a node of the Slurm cluster (srun comes with Slurm)",
     .leading = {"-u", "--kill-on-bad-exit=1"},
     .np = "-n",
     .ppn = "--ntasks-per-node=",
     .nnodes = "-N",
     .hosts = "--nodelist=",
     .hosts_form = HostsForm::hostlist,
     .cpu_bind = "--cpu-bind="},
    // Flux (flux-core 0.60 and later; golden only: Flux is not installable here).
    // flux-run(1): -N and --tasks-per-node ("per-resource" options) place exactly ppn ranks
    // on each of N nodes, which are then the job's alone; -n ("per-task") may not be given
    // with them, so the world size is N x ppn and ranks fill hosts evenly (Fill::evenly).
    // --requires=host:LIST (RFC 35 constraint, RFC 29 hostlist) restricts the nodes to ezpz's
    // hosts. Flux copies the submitting environment by default. -u: output as it is
    // printed; exit-on-error (flux-shell-options(7)): the first rank to fail ends the job,
    // as srun's --kill-on-bad-exit; cpu-affinity takes off, on, per-task or map:LIST. Each
    // rank's FLUX_TASK_RANK & co. are in rank_env.cpp and runtime_env.cpp. `flux --version`
    // runs `flux version`, whose "libflux-core:" line names it.
    {.name = "flux",
     .programs = {"flux"},
     .flavours = {{"Flux", {"libflux-core"}, "flux"}},
     .install = "run inside a Flux instance (flux alloc, flux batch), where flux-core is",
     .leading = {"run", "-u", "--setopt=exit-on-error"},
     .ppn = "--tasks-per-node=",
     .nnodes = "-N",
     .hosts = "--requires=host:",
     .hosts_form = HostsForm::hostlist,
     .cpu_bind = "--setopt=cpu-affinity="},
    // Its command line is torchrun_argv's; on several hosts it reads Hydra's hostfile.
    {.name = "torchrun",
     .programs = {"torchrun"},
     .install = "activate the Python environment that has torch",
     .hosts_form = HostsForm::hostfile},
}};

// Names users type for a dialect.
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> k_aliases = {{
    {"mpich", "hydra"},
    {"ompi", "openmpi"},
}};

const Dialect* find_dialect(std::string_view name) {
  for (const auto& [alias, dialect] : k_aliases) {
    if (alias == name) name = dialect;
  }
  for (const Dialect& dialect : k_dialects) {
    if (dialect.name == name) return &dialect;
  }
  return nullptr;
}

std::vector<std::string> mpi_argv(const Dialect& d, const LauncherInput& in) {
  std::vector<std::string> argv{std::string(d.programs.front())};
  argv.insert(argv.end(), d.leading.begin(), d.leading.end());
  add_flag(argv, d.nnodes, std::to_string(in.hosts.size()));
  add_flag(argv, d.np, std::to_string(in.world_size));
  add_flag(argv, d.ppn, std::to_string(in.ppn));
  if (d.hosts_form == HostsForm::hostlist && !in.hosts.empty()) {
    add_flag(argv, d.hosts, compress_hostlist(in.hosts));
  } else if (d.hosts_form == HostsForm::hostfile && !in.hostfile.empty()) {
    add_flag(argv, d.hosts, in.hostfile);
  }
  if (!in.cpu_bind.value.empty()) add_flag(argv, d.cpu_bind, in.cpu_bind.value);
  if (in.cpu_bind.depth > 0) add_flag(argv, d.depth, std::to_string(in.cpu_bind.depth));
  if (!d.export_var.empty()) {
    // Open MPI forwards nothing by default: the ranks need at least the paths, where set.
    for (const char* name : {"PATH", "LD_LIBRARY_PATH"}) {
      if (in.environment.count(name)) add_flag(argv, d.export_var, name);
    }
    for (const std::string& name : in.exported) add_flag(argv, d.export_var, name);
  }
  return argv;
}

// torchrun starts the ranks of one host. On one host it runs alone; on several it is
// started once per host by Hydra and meets the others at a static rendezvous on the first
// host, node ranks in host order: so RANK follows the hosts and MASTER_ADDR is the first
// host, as with every other launcher. (c10d would number the nodes as they arrive, and
// its store is hosted only where torchrun recognises the endpoint as its own name, which
// a network-suffixed name or a simulated host is not: nobody hosts it and all wait.)
std::vector<std::string> torchrun_argv(const LauncherInput& in) {
  std::vector<std::string> torchrun{"torchrun"};
  if (in.hosts.size() <= 1) {
    torchrun.insert(torchrun.end(), {"--standalone", "--nnodes=1"});
  } else {
    torchrun.insert(torchrun.end(), {fmt::format("--nnodes={}", in.hosts.size()),
                                     fmt::format("--master_addr={}", in.master_addr),
                                     fmt::format("--master_port={}", in.master_port)});
  }
  torchrun.insert(torchrun.end(),
                  {fmt::format("--nproc_per_node={}", in.ppn),
                   // Python 3.11's enum.Flag no longer lists Std.NONE (0), so torch 1.13
                   // (Debian 12's) parses its own defaults "0" to None and fails
                   // ('NoneType' object has no attribute 'get'). A map naming only local
                   // rank 9 means "no redirection" for ranks 0-8 everywhere.
                   "--redirects=9:0", "--tee=9:0",
                   // torch 1.13 looks at its ranks every 5 s (later versions 0.1 s): each
                   // job would end up to 5 s after its ranks, and a failure be seen late.
                   "--monitor_interval=0.1", "--no_python"});
  if (in.hosts.size() <= 1) return torchrun;
  LauncherInput per_host = in;
  per_host.ppn = 1;
  per_host.world_size = static_cast<int>(in.hosts.size());
  per_host.cpu_bind = {};
  std::vector<std::string> argv = mpi_argv(*find_dialect("hydra"), per_host);
  // Each host's torchrun takes its node rank from Hydra's PMI_RANK (one rank per host, in
  // hostfile order). The shell only reads that variable: torchrun and the user's command
  // are its positional parameters, passed on as "$@", never parsed.
  argv.insert(argv.end(), {"sh", "-c", R"(exec "$0" --node_rank="$PMI_RANK" "$@")"});
  argv.insert(argv.end(), torchrun.begin(), torchrun.end());
  return argv;
}

}  // namespace

std::string known_launchers() {
  std::vector<std::string_view> names;
  for (const Dialect& dialect : k_dialects) names.push_back(dialect.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

bool is_known_launcher(std::string_view name) {
  return find_dialect(name) != nullptr;
}

std::string canonical_launcher(std::string_view name) {
  const Dialect* row = find_dialect(name);
  return std::string(row ? row->name : name);
}

std::vector<std::string_view> launcher_programs(std::string_view dialect) {
  const Dialect* row = find_dialect(dialect);
  return row ? row->programs : std::vector<std::string_view>{};
}

std::string_view expected_flavour(std::string_view dialect) {
  const Dialect* row = find_dialect(dialect);
  return row && !row->flavours.empty() ? row->flavours.front().name : "";
}

std::string_view launcher_install_hint(std::string_view dialect) {
  const Dialect* row = find_dialect(dialect);
  return row ? row->install : "";
}

namespace {

const LauncherFlavour* first_flavour(auto&& fits) {
  for (const Dialect& dialect : k_dialects) {
    for (const LauncherFlavour& flavour : dialect.flavours) {
      if (fits(flavour)) return &flavour;
    }
  }
  return nullptr;
}

}  // namespace

const LauncherFlavour* find_flavour(std::string_view version_output) {
  return first_flavour([&](const LauncherFlavour& flavour) {
    return std::any_of(flavour.markers.begin(), flavour.markers.end(), [&](std::string_view m) {
      return version_output.find(m) != std::string_view::npos;
    });
  });
}

const LauncherFlavour* flavour_named(std::string_view name) {
  return first_flavour([&](const LauncherFlavour& flavour) { return flavour.name == name; });
}

std::string find_version(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool starts = std::isdigit(static_cast<unsigned char>(text[i])) &&
                  (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])));
    if (!starts) continue;
    std::size_t end = text.find_first_not_of("0123456789.", i);
    std::string_view number = text.substr(i, end - i);
    while (number.ends_with('.')) number.remove_suffix(1);
    if (number.find('.') != std::string_view::npos) return std::string(number);
    i = end == std::string_view::npos ? text.size() : end;
  }
  return "";
}

std::string_view program_dialect(std::string_view dialect, std::size_t nhosts) {
  if (dialect == "torchrun" && nhosts > 1) return "hydra";
  return dialect;
}

std::string missing_root_assignments(std::string_view dialect, const Env& env) {
  const Dialect* row = find_dialect(dialect);
  if (!row) return "";
  std::vector<std::string> all;
  bool missing = false;
  for (std::string_view name : row->root_variables) {
    auto value = env.find(std::string(name));
    missing = missing || value == env.end() || value->second != "1";
    all.push_back(fmt::format("{}=1", name));
  }
  return missing ? fmt::format("{}", fmt::join(all, " ")) : "";
}

std::vector<std::string> launcher_argv(std::string_view dialect, const LauncherInput& input) {
  if (dialect == "torchrun") return torchrun_argv(input);
  const Dialect* row = find_dialect(dialect);
  if (!row) {
    throw Error(
        fmt::format("unknown launcher \"{}\"; expected one of {}", dialect, known_launchers()));
  }
  return mpi_argv(*row, input);
}

bool launcher_sets_rank_env(std::string_view dialect) {
  return dialect == "torchrun";
}

bool launcher_fills_in_order(std::string_view dialect) {
  return dialect != "torchrun" && dialect != "flux";
}

bool launcher_takes_hostfile(std::string_view dialect) {
  // torchrun on several hosts is started through Hydra, which reads a hostfile.
  const Dialect* row = find_dialect(dialect);
  return row == nullptr || row->hosts_form == HostsForm::hostfile;
}

namespace {

// "1-8", or "1-3,5-8" when a reserved core splits the block.
std::string format_core_block(const std::vector<int>& cores, size_t first, size_t count) {
  std::string text;
  size_t run_start = first;
  for (size_t i = first; i < first + count; ++i) {
    bool run_ends = i + 1 == first + count || cores[i + 1] != cores[i] + 1;
    if (!run_ends) continue;
    text += fmt::format("{}{}-{}", text.empty() ? "" : ",", cores[run_start], cores[i]);
    run_start = i + 1;
  }
  return text;
}

std::vector<int> usable_cores(const CpuBind& bind, int socket) {
  std::vector<int> cores;
  int first = socket * bind.cores_per_socket;
  for (int core = first; core < first + bind.cores_per_socket; ++core) {
    const auto& reserved = bind.reserved_cores;
    if (std::find(reserved.begin(), reserved.end(), core) == reserved.end()) cores.push_back(core);
  }
  return cores;
}

}  // namespace

CpuBindArgs profile_cpu_bind(const CpuBind& bind, int ppn) {
  if (bind.style == CpuBind::Style::none) return {};
  if (bind.style == CpuBind::Style::depth) return {"depth", bind.depth};
  std::string list = "list";
  int sockets = std::max(1, std::min(bind.sockets, ppn));
  for (int socket = 0; socket < sockets; ++socket) {
    std::vector<int> cores = usable_cores(bind, socket);
    // Ranks spread evenly: the first (ppn % sockets) sockets take one extra.
    size_t ranks = ppn / sockets + (socket < ppn % sockets ? 1 : 0);
    size_t block = cores.size() / std::max<size_t>(ranks, 1);
    for (size_t rank = 0; rank < ranks && block > 0; ++rank) {
      // Two appends, not ":" + string: GCC 12 -O3 warns falsely on that (-Wrestrict, PR 105329).
      list += ':';
      list += format_core_block(cores, rank * block, block);
    }
  }
  return {list, 0};
}

}  // namespace ezpz
