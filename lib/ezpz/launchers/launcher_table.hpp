#pragma once
// Everything ezpz knows about each launcher, one row per launcher: its programs and flags, how it
// takes hosts, the variables it sets for each rank, how it reports a failed rank, what its
// `--version` says and where it comes from. Adding a launcher is adding a row (and its golden
// plans, tests/golden/launch/); tests/unit/launchers/test_launcher_table.cpp checks each row is
// whole. Plain constexpr data and the standard library only: ezpz-rankenv, started once per
// rank, reads the per-rank variables from these same rows (launchers.cpp builds the command
// line, binding.cpp its CPU binding, rank_env.cpp and runtime_env.cpp read the variables,
// supervise/attempts.cpp the reports, doctor/ the identity).
#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>

namespace ezpz {

// A short list that can be constexpr data (a std::vector cannot): at most Capacity items.
template <typename T, std::size_t Capacity>
class List {
 public:
  constexpr List() = default;
  constexpr List(std::initializer_list<T> items) : size_(items.size()) {
    if (items.size() > Capacity) throw "List: more items than its capacity";  // a compile error
    std::size_t i = 0;
    for (const T& item : items) items_[i++] = item;
  }
  constexpr const T* begin() const { return items_.data(); }
  constexpr const T* end() const { return items_.data() + size_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& front() const { return items_[0]; }

 private:
  std::array<T, Capacity> items_{};
  std::size_t size_ = 0;
};

// How hosts are handed over: a hostfile path, a Slurm hostlist expression ("n[01-02]"), or
// Cray node ids joined by commas ("12,13" for nid00012 and nid00013).
enum class HostsForm { hostfile, hostlist, node_ids };

// How the command line is built: from the row's flags, or torchrun's own (launchers.cpp).
enum class ArgvForm { flags, torchrun };

// An implementation of a launcher, as its `--version` output names it: a flavour matches when
// the output holds any of its markers, rows (and flavours) in order.
struct LauncherFlavour {
  std::string_view name;                // "Open MPI"
  List<std::string_view, 2> markers{};  // "Open MPI", "OpenRTE"
};

// The variables a launcher sets for each rank; nullptr where it sets none. C strings: ezpz-rankenv
// hands them to getenv.
struct RankVariables {
  const char* rank = nullptr;
  const char* local_rank = nullptr;
  const char* size = nullptr;
  const char* local_size = nullptr;
  // A per-host list of ranks and this host's index in it: exact when hosts hold different
  // numbers of ranks (srun -n 3 on 2 nodes: "2,1"), where the plain count is not.
  const char* local_size_list = nullptr;
  const char* node = nullptr;  // this host's index, from 0
  const char* host = nullptr;  // this host's name as the launcher's host list spells it
  // The host count, from a launcher that gives no count per host (Flux's FLUX_JOB_NNODES): each
  // host holds size / hosts ranks, the share of its block placement, when that divides.
  const char* host_count = nullptr;
};

// When the words of a failure report (`what`) mean the rank died of a signal.
struct SignalTest {
  enum Kind {
    always,              // the launcher reports only ranks that ended abnormally
    never,               // the report is of an exit code
    if_words_hold,       // `words` appear in `what`
    unless_words_start,  // `what` does not start with `words`
  } kind = always;
  std::string_view words = {};
};

// How a launcher's output reports a rank that failed: capture groups of `regex` by index, 0 where
// absent. Some put their words on the line after the one naming the process (`what_regex`,
// group 1). Matched one line at a time (supervise/attempts.cpp).
struct FailureReport {
  std::string_view regex;
  int host = 0, ranks = 0, pid = 0, what = 0;
  SignalTest died_of_signal = {};
  std::string_view what_regex = {};
  std::string_view what_prefix = {};  // put before what_regex's number: Open MPI's bare code
  std::string_view host_before = {};  // the line before holds the host (group 1): torchrun's block
};

// How a launcher writes each rank's cores in its binding (binding.cpp): the cores of one rank
// as runs ("1-8,10-12"), each core ("1+2+3"), or a hexadecimal mask ("0x1fe"); `within` joins
// the runs or cores of one rank, `between` the ranks.
enum class CoreSpelling { runs, each, hex_mask };
struct CoreListForm {
  CoreSpelling spelling = CoreSpelling::runs;
  std::string_view within{};
  std::string_view between{};
};

// How a launcher spells a CPU binding (binding.cpp renders it): argv words, formatted with
// {depth} (cores per rank), {ppn} (ranks per host), {cores} (each local rank's cores, written
// as `list` says) and {value} (the user's --cpu-bind, as written). An empty form is one the
// launcher cannot say: a depth binding is then written as its cores, and what neither form
// can say is refused.
struct BindingForms {
  List<std::string_view, 4> depth{};     // `depth` consecutive cores per rank, from core 0
  List<std::string_view, 2> cores{};     // each local rank its own cores
  List<std::string_view, 2> verbatim{};  // the user's --cpu-bind
  CoreListForm list{};
  // The depth words also place ppn ranks on each host, so the ppn flag is left out (Open MPI
  // takes one mapping policy: -N beside --map-by is overridden by it).
  bool depth_places_ranks = false;
  // Set where the launcher binds nothing: why a profile's binding is dropped (not an error).
  std::string_view dropped_why{};
  // Its own --cpu-bind reads PALS's list:A:B (the Python ezpz's documented CPU_BIND); elsewhere
  // such a value is each local rank's cores, spelled in `cores` (binding.cpp).
  bool verbatim_reads_list = false;
};

struct LauncherRow {
  std::string_view name{};              // the dialect's name, as profiles and --launcher say it
  List<std::string_view, 2> aliases{};  // other names users type for it ("mpich")
  // The programs that may run it, in the order they are tried; the first is the default name.
  List<std::string_view, 3> programs{};
  // The implementations that take these flags; the first is the one messages ask for. None:
  // the program's identity is not checked.
  List<LauncherFlavour, 2> flavours{};
  std::string_view install{};  // where the launcher comes from, when it is missing
  ArgvForm argv_form = ArgvForm::flags;
  List<std::string_view, 3> leading{};  // fixed flags right after the program
  // A flag ending in '=' takes its value in the same word ("--np=8"); others the next word.
  std::string_view np{};      // flag for the total ranks
  std::string_view ppn{};     // flag for ranks per host
  std::string_view nnodes{};  // flag for the host count, if the launcher has one
  std::string_view hosts{};   // flag naming the hosts
  HostsForm hosts_form = HostsForm::hostfile;
  // Flag naming the one host of a run here alone, where ezpz writes no hostfile: a launcher
  // left to choose asks the resource manager its environment names (PBS_NODEFILE, SLURM_*),
  // even where ezpz was told --scheduler local.
  std::string_view here{};
  BindingForms binding{};         // how it spells a CPU binding
  std::string_view export_var{};  // flag to export one variable (Open MPI's -x)
  // Flags that give each rank its own GPUs, where the launcher has them: the count per rank
  // and the profile's binding (gpu_bind.launcher_bind). Others: ezpz-rankenv's masks.
  std::string_view gpus_per_rank{};
  std::string_view gpu_bind{};
  // Variables the launcher wants set to 1 before it runs as root (ezpz never sets them).
  List<std::string_view, 2> root_variables{};
  // Whether it sets RANK & co. itself (torchrun), so ezpz-rankenv is not needed.
  bool sets_rank_env = false;
  // With rank records on (issue 18, ezpz-rankenv's relay): this leading flag is left out. srun's
  // -u forwards a rank's output in pieces that cut records (4,167 broken lines in 200,000,
  // bench/output_lines); line-buffered it forwards whole lines up to 1024 bytes, a record's
  // most, and the relay flushes a partial line itself after a quiet spell.
  std::string_view unbuffered{};
  // Added to ezpz's own one-per-node steps (kill --all-nodes, stacks, doctor's probes, yeet's
  // stager), which may run beside the job's own launch: srun's --overlap lets a step share the
  // CPUs a running step holds, where without it the step waits for that launch to end
  // ("Requested nodes are busy").
  std::string_view overlap{};
  // Whether it cuts the relay's records on their way (Open MPI: a rank's stdout is a pty, read
  // in pieces; broken lines in 2 runs of 5): ezpz-rankenv writes none, the bytes pass as they are.
  bool cuts_records = false;
  // Whether it can put fewer ranks on the last host (-n 3 at 2 per host): all but torchrun,
  // whose --nproc_per_node is one count for every host, and Flux, which takes no rank count.
  bool fills_in_order = true;
  // The dialect of the program that starts it on several hosts (torchrun: Hydra); empty: itself.
  std::string_view multi_host_dialect{};
  RankVariables rank_variables{};
  List<FailureReport, 2> failure_reports{};
  // doctor: the MPI libraries whose programs it starts (mpi4py built against another is alone).
  List<std::string_view, 2> mpi_families{};
  // doctor --deep: how to give the probe's MPI its process manager, when it needs saying.
  std::string_view pmi_hint{};
  // The launcher's own processes it starts on this node, by command name (/proc/PID/comm): one
  // that dies of a signal while the launcher lives is the launcher's death. MPICH's Hydra under
  // its fork launcher (and Intel MPI's) never reaps a SIGKILLed hydra_pmi_proxy: it waits on for
  // the proxy's ranks, which have lost their PMI server.
  List<std::string_view, 2> parts{};
  // A program it starts from the directory of the path it was run as (a link's, not the link's
  // target's): a link to mpiexec.hydra elsewhere fails before any rank starts ("execvp error on
  // file .../hydra_pmi_proxy"). doctor looks for it there.
  std::string_view started_beside{};
};

// Cray PALS (Aurora, Polaris): --envall passes ezpz's environment to every rank; --line-buffer
// keeps ranks' lines whole. MPICH Hydra passes the environment by default; Open MPI needs -x per
// variable; srun and aprun export the environment by default.
// `--version` markers: Hydra (whose output mentions "slurm") comes before Slurm. Open MPI's mpirun
// names itself "Open MPI", its other names (mpirun.openmpi, orterun) "OpenRTE". Unverified: no
// Cray PALS or ALPS was at hand; their programs are assumed to name themselves.
inline constexpr std::array<LauncherRow, 7> k_launchers = {{
    {.name = "pals",
     .programs = {"mpiexec"},
     .flavours = {{"Cray PALS", {"PALS"}}},
     .install = "load the Cray PALS module (module load cray-pals)",
     .leading = {"--envall", "--line-buffer"},
     .np = "--np=",
     .ppn = "--ppn=",
     .hosts = "--hostfile=",
     // ALCF's Polaris and Aurora guides: --cpu-bind=depth --depth=N, or --cpu-bind=list:A:B:...
     // (one block of cores per local rank, colon-separated).
     .binding = {.depth = {"--cpu-bind=depth", "--depth={depth}"},
                 .cores = {"--cpu-bind=list:{cores}"},
                 .verbatim = {"--cpu-bind={value}"},
                 .list = {.spelling = CoreSpelling::runs, .within = ",", .between = ":"},
                 .verbatim_reads_list = true},
     .rank_variables = {.rank = "PALS_RANKID",
                        .local_rank = "PALS_LOCAL_RANKID",
                        .size = "PMI_SIZE",
                        .local_size = "PALS_LOCAL_SIZE",
                        .node = "PALS_NODEID"},
     // x1000c0s0b0n0: rank 3 died from signal 9 / rank 3 exited with code 1
     .failure_reports = {{.regex =
                              R"(^(\S+): rank (\d+) (died from signal \d+|exited with code \d+))",
                          .host = 1,
                          .ranks = 2,
                          .what = 3,
                          .died_of_signal = {SignalTest::if_words_hold, "signal"}}},
     .mpi_families = {"MPICH", "Intel MPI"}},
    {.name = "hydra",
     .aliases = {"mpich"},
     .programs = {"mpiexec", "mpiexec.hydra", "mpiexec.mpich"},
     .flavours = {{"MPICH Hydra", {"HYDRA build details"}},
                  {"Intel MPI", {"Intel(R) MPI Library"}}},
     .install = "install MPICH (apt-get install mpich) or load its module",
     .np = "-n",
     .ppn = "-ppn",
     .hosts = "-f",
     // Hydra reads PBS_NODEFILE itself: in a PBS job, `ezpz launch --scheduler local` ran ssh to
     // the nodefile's first host (MPICH 4.0.2 here); -hosts (MPICH's and Intel MPI's Hydra)
     // keeps the ranks on this host.
     .here = "-hosts",
     // MPICH's Hydra user guide (process-core binding): -bind-to user:0+1,2+3 binds local
     // rank 0 to cores 0 and 1, rank 1 to 2 and 3 (checked with MPICH 4.0.2's Hydra here);
     // it has no depth of its own (it refuses "depth"), so depth is written as its cores.
     .binding = {.cores = {"-bind-to", "user:{cores}"},
                 .verbatim = {"-bind-to", "{value}"},
                 .list = {.spelling = CoreSpelling::each, .within = "+", .between = ","}},
     // Hydra names each proxy's host as its host list does (per proxy, so never stale).
     .rank_variables = {.rank = "PMI_RANK",
                        .local_rank = "MPI_LOCALRANKID",
                        .size = "PMI_SIZE",
                        .local_size = "MPI_LOCALNRANKS",
                        .host = "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"},
     // =   [RANK 1 ]PID 7304 RUNNING AT n02 / =   EXIT CODE: 9. Printed only for a rank that
     // ended abnormally: MPICH 4.0 as "EXIT CODE: 9" (the signal's number), later versions as
     // "KILLED BY SIGNAL: 9 (Killed)".
     .failure_reports = {{.regex = R"(^=\s+(?:RANK (\d+) )?PID (\d+) RUNNING AT (\S+)\s*$)",
                          .host = 3,
                          .ranks = 1,
                          .pid = 2,
                          .died_of_signal = {SignalTest::always},
                          .what_regex = R"(^=\s+((?:EXIT CODE|KILLED BY SIGNAL): .*?)\s*$)"}},
     .mpi_families = {"MPICH", "Intel MPI"},
     .parts = {"hydra_pmi_proxy"},
     .started_beside = "hydra_pmi_proxy"},
    {.name = "openmpi",
     .aliases = {"ompi"},
     .programs = {"mpirun", "mpirun.openmpi", "mpiexec.openmpi"},
     .flavours = {{"Open MPI", {"Open MPI", "OpenRTE"}}},
     .install = "install Open MPI or load its module",
     .np = "-n",
     .ppn = "-N",
     .hosts = "--hostfile",
     // mpirun(1) of Open MPI 4.1: --map-by ppr:N:node:PE=n --bind-to core puts N ranks on
     // each host, each bound to its own n consecutive cores (checked with --report-bindings
     // on 4.1.4 here; -N beside --map-by is silently overridden, so this replaces -N). Its
     // --cpu-list binds one core per rank and sorts the list, and a rankfile numbers cores
     // logically: no per-rank list of cores is written.
     .binding = {.depth = {"--map-by", "ppr:{ppn}:node:PE={depth}", "--bind-to", "core"},
                 .verbatim = {"--bind-to", "{value}"},
                 .depth_places_ranks = true},
     .export_var = "-x",
     .root_variables = {"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"},
     .cuts_records = true,
     .rank_variables = {.rank = "OMPI_COMM_WORLD_RANK",
                        .local_rank = "OMPI_COMM_WORLD_LOCAL_RANK",
                        .size = "OMPI_COMM_WORLD_SIZE",
                        .local_size = "OMPI_COMM_WORLD_LOCAL_SIZE"},
     .failure_reports =
         {// mpirun noticed that process rank 1 with PID 1234 on node n02 exited on signal 9
          // (Killed).
          {.regex = R"(process rank (\d+) with PID (\d+) on node (\S+) (exited on signal [^.]*))",
           .host = 3,
           .ranks = 1,
           .pid = 2,
           .what = 4,
           .died_of_signal = {SignalTest::always}},
          // An exit code: "  Process name: [[10246,1],1]" / "  Exit code:    4" (no host)
          {.regex = R"(^\s*Process name: \[\[\d+,\d+\],(\d+)\]\s*$)",
           .ranks = 1,
           .died_of_signal = {SignalTest::never},
           .what_regex = R"(^\s*Exit code:\s*(\d+)\s*$)",
           .what_prefix = "exited with code "}},
     .mpi_families = {"Open MPI"}},
    // --kill-on-bad-exit: one failing rank ends the step instead of leaving the rest hung.
    {.name = "srun",
     .programs = {"srun"},
     // "slurm 23.02.7"; Debian's "slurm-wlm 22.05.8"
     .flavours = {{"Slurm", {"slurm"}}},
     .install = "run on a node of the Slurm cluster (srun comes with Slurm)",
     .leading = {"-u", "--kill-on-bad-exit=1"},
     .np = "-n",
     .ppn = "--ntasks-per-node=",
     .nnodes = "-N",
     .hosts = "--nodelist=",
     .hosts_form = HostsForm::hostlist,
     // srun(1): -c N --cpu-bind=cores gives each task N cores of its own (OLCF's Frontier
     // line: -c7); --cpu-bind=mask_cpu:M0,M1 binds local task i to the cores of mask Mi.
     .binding = {.depth = {"-c", "{depth}", "--cpu-bind=cores"},
                 .cores = {"--cpu-bind=mask_cpu:{cores}"},
                 .verbatim = {"--cpu-bind={value}"},
                 .list = {.spelling = CoreSpelling::hex_mask, .between = ","}},
     // srun(1): --gpus-per-task, and --gpu-bind=closest|map_gpu:...|per_task:N.
     .gpus_per_rank = "--gpus-per-task=",
     .gpu_bind = "--gpu-bind=",
     // slurmstepd sets the node's Slurm name for each task.
     .unbuffered = "-u",
     .overlap = "--overlap",
     .rank_variables = {.rank = "SLURM_PROCID",
                        .local_rank = "SLURM_LOCALID",
                        .size = "SLURM_NTASKS",
                        .local_size = "SLURM_NTASKS_PER_NODE",
                        .local_size_list = "SLURM_STEP_TASKS_PER_NODE",
                        .node = "SLURM_NODEID",
                        .host = "SLURMD_NODENAME"},
     // srun: error: n02: task 1: Killed / tasks 0-3: Exited with exit code 3
     .failure_reports = {{.regex = R"(^srun: error: (\S+): tasks? ([0-9,-]+): (.+)$)",
                          .host = 1,
                          .ranks = 2,
                          .what = 3,
                          .died_of_signal = {SignalTest::unless_words_start,
                                             "Exited with exit code"}}},
     .pmi_hint = "--launcher-arg=--mpi=pmi2"},
    // Flux (flux-core 0.60 and later; golden only: Flux is not installable here).
    // flux-run(1): -N and --tasks-per-node ("per-resource" options) place exactly ppn ranks on
    // each of N nodes, which are then the job's alone; -n ("per-task") may not be given with
    // them, so the world size is N x ppn and ranks fill hosts evenly. --requires=host:LIST
    // (RFC 35 constraint, RFC 29 hostlist) restricts the nodes to ezpz's hosts. Flux copies the
    // submitting environment by default. -u: output as it is printed; exit-on-error
    // (flux-shell-options(7)): the first rank to fail ends the job, as srun's
    // --kill-on-bad-exit; cpu-affinity takes off, on, per-task or map:LIST. `flux --version`
    // runs `flux version`, whose "libflux-core:" line names it. Per-rank variables:
    // flux-environment(7); no count of this host's ranks (ezpz's exported LOCAL_WORLD_SIZE,
    // --tasks-per-node, stays for ezpz-rankenv). No per-task failure line is documented:
    // ezpz-rankenv's own report names a failed rank.
    {.name = "flux",
     .programs = {"flux"},
     .flavours = {{"Flux", {"libflux-core"}}},
     .install = "run inside a Flux instance (flux alloc, flux batch), where flux-core is",
     .leading = {"run", "-u", "--setopt=exit-on-error"},
     .ppn = "--tasks-per-node=",
     .nnodes = "-N",
     .hosts = "--requires=host:",
     .hosts_form = HostsForm::hostlist,
     // flux-shell-options(7): cpu-affinity=map:0-1;2-3 binds local task 0 to cores 0-1, task 1
     // to 2-3 (hwloc lists, semicolon-separated); depth is written as its cores.
     .binding = {.cores = {"--setopt=cpu-affinity=map:{cores}"},
                 .verbatim = {"--setopt=cpu-affinity={value}"},
                 .list = {.spelling = CoreSpelling::runs, .within = ",", .between = ";"}},
     .fills_in_order = false,
     .rank_variables = {.rank = "FLUX_TASK_RANK",
                        .local_rank = "FLUX_TASK_LOCAL_ID",
                        .size = "FLUX_JOB_SIZE",
                        .host_count = "FLUX_JOB_NNODES"}},
    // Its command line is torchrun_argv's; on several hosts it reads Hydra's hostfile.
    {.name = "torchrun",
     .programs = {"torchrun"},
     .install = "activate the Python environment that has torch",
     .argv_form = ArgvForm::torchrun,
     .binding = {.dropped_why = "torchrun starts its ranks itself and binds no cores"},
     .sets_rank_env = true,
     .fills_in_order = false,
     .multi_host_dialect = "hydra",
     // Its ChildFailedError block (torch/distributed/elastic/multiprocessing/errors, as torch
     // 1.13 and 2.x print it): "  host      : n02" / "  rank      : 1 (local_rank: 1)" /
     // "  exitcode  : 3 (pid: 7304)", a negative exitcode being the signal that killed it.
     // The root cause comes after the other failures of the same monitoring tick: either is a
     // first failure, not a teardown.
     .failure_reports = {{.regex = R"(^\s*rank\s*: (\d+) \(local_rank: \d+\)\s*$)",
                          .ranks = 1,
                          .died_of_signal = {SignalTest::if_words_hold, "-"},
                          .what_regex = R"(^\s*exitcode\s*: (-?\d+) )",
                          .what_prefix = "exitcode ",
                          .host_before = R"(^\s*host\s*: (\S+)\s*$)"}}},
    // Cray ALPS (Cray XC/XE under PBS or Moab: Theta, Blue Waters, Titan). HPE's "Run
    // Applications Using the aprun Command" (a00114008en_us) and Cray's S-2496 "Running
    // Applications": -n PEs, -N PEs per node, -d CPUs per PE, -cc binding (cpu, depth, none
    // or a CPU list), -L candidate node ids (comma-separated; nids, not host names), the login
    // environment forwarded to every PE. Each PE's rank is ALPS_APP_PE; ALPS names no local
    // rank or size, so ezpz's exported WORLD_SIZE and LOCAL_WORLD_SIZE stand. Golden plans only:
    // no ALPS here. Failed ranks are named by ezpz-rankenv's report.
    {.name = "aprun",
     .programs = {"aprun"},
     .flavours = {{"Cray ALPS", {"ALPS"}}},
     .install = "run on a login or MOM node of the Cray ALPS system (aprun comes with ALPS)",
     .np = "-n",
     .ppn = "-N",
     .hosts = "-L",
     .hosts_form = HostsForm::node_ids,
     // -cc depth -d N: each PE bound to its own N CPUs (S-2496, "Using aprun CPU affinity").
     // Per-PE CPU lists are not written: no document at hand says how -cc separates them.
     .binding = {.depth = {"-cc", "depth", "-d", "{depth}"}, .verbatim = {"-cc", "{value}"}},
     .rank_variables = {.rank = "ALPS_APP_PE"}},
}};

}  // namespace ezpz
