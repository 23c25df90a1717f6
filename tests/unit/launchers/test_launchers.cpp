#include <csignal>
#include <optional>
#include <string_view>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {
// 8 ranks, 4 per host, on two hosts listed in /h, bound `depth` cores each.
LauncherInput depth_bound(std::vector<std::string> hosts, int depth) {
  CpuBind bind;
  bind.style = CpuBind::Style::depth;
  bind.depth = depth;
  LauncherInput input;
  input.world_size = 8;
  input.ppn = 4;
  input.hosts = std::move(hosts);
  input.hostfile = "/h";
  input.cpu_bind = profile_core_binding(bind, 4);
  return input;
}
}  // namespace

TEST_CASE("depth binding renders as --cpu-bind=depth --depth=N on PALS", "[launchers]") {
  CHECK(launcher_argv("pals", depth_bound({"a", "b"}, 8)) ==
        std::vector<std::string>{"mpiexec", "--envall", "--line-buffer", "--np=8", "--ppn=4",
                                 "--hostfile=/h", "--cpu-bind=depth", "--depth=8"});
}

TEST_CASE("each dialect spells ranks, hosts and environment its own way", "[launchers]") {
  LauncherInput input;
  input.world_size = 4;
  input.ppn = 2;
  input.hosts = {"n01", "n02"};
  input.hostfile = "/h";
  input.exported = {"MASTER_ADDR"};
  input.environment = {{"PATH", "/usr/bin"}, {"LD_LIBRARY_PATH", "/opt/lib"}};
  CHECK(launcher_argv("hydra", input) ==
        std::vector<std::string>{"mpiexec", "-n", "4", "-ppn", "2", "-f", "/h"});
  CHECK(launcher_argv("openmpi", input) ==
        std::vector<std::string>{"mpirun", "-n", "4", "-N", "2", "--hostfile", "/h", "-x", "PATH",
                                 "-x", "LD_LIBRARY_PATH", "-x", "MASTER_ADDR"});
  CHECK(launcher_argv("srun", input) ==
        std::vector<std::string>{"srun", "-u", "--kill-on-bad-exit=1", "-N", "2", "-n", "4",
                                 "--ntasks-per-node=2", "--nodelist=n[01-02]"});
  // Lines that must reach ezpz whole (rank records, ezpz's own node steps): no -u, so srun
  // forwards each task's output a line at a time.
  input.whole_lines = true;
  CHECK(launcher_argv("srun", input)[1] == "--kill-on-bad-exit=1");
  // ezpz's own node step runs beside the job's launch: srun --overlap, or it would wait for it.
  input.node_step = true;
  CHECK(launcher_argv("srun", input) ==
        std::vector<std::string>{"srun", "--overlap", "--kill-on-bad-exit=1", "-N", "2", "-n", "4",
                                 "--ntasks-per-node=2", "--nodelist=n[01-02]"});
  CHECK(launcher_argv("hydra", input)[1] == "-n");  // no such flag: nothing added
  input.node_step = false;
  input.whole_lines = false;
  // flux-run(1): per-resource options only (-n may not be given with --tasks-per-node).
  CHECK(launcher_argv("flux", input) ==
        std::vector<std::string>{"flux", "run", "-u", "--setopt=exit-on-error", "-N", "2",
                                 "--tasks-per-node=2", "--requires=host:n[01-02]"});
  input.cpu_bind = {.kind = CoreBinding::Kind::verbatim, .verbatim = "per-task"};
  CHECK(launcher_argv("flux", input).back() == "--setopt=cpu-affinity=per-task");
  CHECK_THROWS_WITH(launcher_argv("lsf", input),
                    "unknown launcher \"lsf\"; expected one of pals, hydra, openmpi, srun, flux, "
                    "torchrun, aprun");
}

// A run here alone has no hostfile: Hydra is told the host, or it reads PBS_NODEFILE itself.
TEST_CASE("a run on this host alone names it where the launcher would choose hosts itself",
          "[launchers]") {
  LauncherInput input;
  input.world_size = 2;
  input.ppn = 2;
  input.hosts = {"vm"};
  CHECK(launcher_argv("hydra", input) ==
        std::vector<std::string>{"mpiexec", "-n", "2", "-ppn", "2", "-hosts", "vm"});
  CHECK(launcher_argv("openmpi", input) ==
        std::vector<std::string>{"mpirun", "-n", "2", "-N", "2"});  // no such flag: none
  input.hosts = {"n01", "n02"};  // several hosts and no hostfile: nothing to name them by
  CHECK(launcher_argv("hydra", input) ==
        std::vector<std::string>{"mpiexec", "-n", "2", "-ppn", "2"});
}

TEST_CASE("aprun takes Cray node ids, PEs per node and the depth binding", "[launchers]") {
  // aprun takes no hostfile: /h is not passed.
  LauncherInput input = depth_bound({"nid00012", "nid00013.hsn"}, 16);
  CHECK(launcher_argv("aprun", input) == std::vector<std::string>{"aprun", "-n", "8", "-N", "4",
                                                                  "-L", "12,13", "-cc", "depth",
                                                                  "-d", "16"});
  // Node 0, and a host not named by its node id (aprun refuses it, naming it).
  input.hosts = {"nid00000", "login1"};
  input.cpu_bind = {};
  CHECK(launcher_argv("aprun", input) ==
        std::vector<std::string>{"aprun", "-n", "8", "-N", "4", "-L", "0,login1"});
}

TEST_CASE("shell quoting reads back unchanged, hostile strings included", "[render]") {
  struct Row {
    const char* word;
    const char* quoted;
  };
  const std::vector<Row> rows = {
      {"python3", "python3"},
      {"--lr=3e-4", "--lr=3e-4"},
      {"", "''"},
      {"two words", "'two words'"},
      {"$(touch /tmp/pwned)", "'$(touch /tmp/pwned)'"},
      {"`id`", "'`id`'"},
      {"it's", "'it'\\''s'"},
      {"a\nb", "'a\nb'"},
  };
  for (const Row& row : rows) CHECK(shell_quote(row.word) == row.quoted);
}

TEST_CASE("rendered commands never show secret values", "[render]") {
  LaunchPlan plan;
  plan.env = {{"WANDB_API_KEY", "abc123"}, {"HF_TOKEN", "hf_x"}, {"MASTER_PORT", "29500"}};
  plan.argv = {"mpiexec", "python3", "x.py"};
  CHECK(render_command(plan) ==
        "WANDB_API_KEY='<redacted>' HF_TOKEN='<redacted>' MASTER_PORT=29500 mpiexec python3 x.py");
}

namespace {
using Vars = std::map<std::string, std::string>;
const char* find_in(const Vars& vars, const char* name) {
  auto it = vars.find(name);
  return it == vars.end() ? nullptr : it->second.c_str();
}

const char* hydra_rank_three(const char* name) {
  static const Vars vars = {{"PMI_RANK", "3"},
                            {"MPI_LOCALRANKID", "1"},
                            {"PMI_SIZE", "4"},
                            {"MPI_LOCALNRANKS", "2"},
                            {"SLURM_PROCID", "7"}};
  return find_in(vars, name);
}

// srun -n 3 --ntasks-per-node=2 on 2 nodes, rank 2 on the second: SLURM_NTASKS_PER_NODE is the
// request (2), the step's list says what each node holds.
const char* srun_rank_two(const char* name) {
  static const Vars vars = {{"SLURM_PROCID", "2"},
                            {"SLURM_LOCALID", "0"},
                            {"SLURM_NTASKS", "3"},
                            {"SLURM_NTASKS_PER_NODE", "2"},
                            {"SLURM_STEP_TASKS_PER_NODE", "2,1"},
                            {"SLURM_NODEID", "1"}};
  return find_in(vars, name);
}
}  // namespace

TEST_CASE("rank env gives each host its own local world size", "[rank_env]") {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(map_rank_env("srun", srun_rank_two) ==
        Pairs{{"RANK", "2"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "3"}, {"LOCAL_WORLD_SIZE", "1"}});
  CHECK(map_rank_env("", srun_rank_two).back() ==
        std::pair<std::string, std::string>{"LOCAL_WORLD_SIZE", "1"});
  // Another launcher's list is not trusted.
  CHECK(map_rank_env("hydra", srun_rank_two).empty());
  CHECK(tasks_on_node("2(x3),1", 2) == 2);
  CHECK(tasks_on_node("2(x3),1", 3) == 1);
  CHECK(tasks_on_node("2(x3),1", 4) == std::nullopt);
  CHECK(tasks_on_node("2(x,1", 0) == std::nullopt);
  CHECK(tasks_on_node("", 0) == std::nullopt);
}

TEST_CASE("ezpz-rankenv names its host as the launcher placed it", "[rank_env]") {
  auto hydra_on_n02 = [](const char* name) -> const char* {
    const std::string_view wanted = name;
    if (wanted == "MPIR_CVAR_CH3_INTERFACE_HOSTNAME") return "n02";
    return wanted == "SLURMD_NODENAME" ? "stale-batch-host" : nullptr;
  };
  CHECK(rank_host("hydra", hydra_on_n02, "vm") == "n02");
  CHECK(rank_host("srun", hydra_on_n02, "vm") == "stale-batch-host");
  CHECK(rank_host("pals", hydra_on_n02, "x1000c0s0b0n0") == "x1000c0s0b0n0");
}

TEST_CASE("ezpz-rankenv's exit report", "[rank_env]") {
  CHECK(exit_report("1", 7304, "n02", 3 << 8) ==
        "ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code 3");
  CHECK(exit_report("0", 9, "n01", SIGKILL) ==
        "ezpz-rankenv: rank 0 (pid 9) on n01: killed by signal 9 (SIGKILL)");
}

TEST_CASE("ezpz reads a rank's status back from ezpz-rankenv's report", "[rank_env]") {
  struct Row {
    std::string_view line;
    std::optional<int> status;
  };
  const std::vector<Row> rows = {
      {"ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code 3", 3},
      {"ezpz-rankenv: rank 0 (pid 9) on n01: killed by signal 9 (SIGKILL)", 137},
      {"ezpz-rankenv: rank 12 (pid 9) on x1000c0s0b0n0.hsn: exited with code 255", 255},
      {"ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code ", std::nullopt},
      {"ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code x", std::nullopt},
      {"ezpz-rankenv: rank 1 (pid 7304) on n02: finished", std::nullopt},
      {"ezpz-rankenv: rank 1 (pid 7304) on n02 exited with code 3", std::nullopt},
      {"ezpz-rankenv: /no/such: No such file or directory", std::nullopt},
      {"rank 1 (pid 7304) on n02: exited with code 3", std::nullopt},
      {"", std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.line);
    CHECK(exit_report_status(row.line) == row.status);
  }
  CHECK(exit_report_status(exit_report("5", 1, "h", 7 << 8)) == 7);
  CHECK(exit_report_status(exit_report("5", 1, "h", SIGSEGV)) == 128 + SIGSEGV);
}

// flux run -N 2 --tasks-per-node=2, rank 3 on the second node (flux-environment(7)): Flux
// says no ranks-per-host count; its PMI plugin sets PMI_RANK/PMI_SIZE too.
const char* flux_rank_three(const char* name) {
  static const Vars vars = {{"FLUX_TASK_RANK", "3"}, {"FLUX_TASK_LOCAL_ID", "1"},
                            {"FLUX_JOB_SIZE", "4"},  {"FLUX_JOB_NNODES", "2"},
                            {"PMI_RANK", "3"},       {"PMI_SIZE", "4"},
                            {"MPI_LOCALNRANKS", "9"}};
  return find_in(vars, name);
}

TEST_CASE("rank env maps Flux's task variables; ezpz's LOCAL_WORLD_SIZE stays", "[rank_env]") {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(map_rank_env("flux", flux_rank_three) ==
        Pairs{{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}});
  // Under Flux, Hydra's stale MPI_LOCALNRANKS is not taken for this host's count.
  CHECK(rank_host("flux", flux_rank_three, "tuolumne1001") == "tuolumne1001");
}

TEST_CASE("rank env trusts the launcher's own variables first", "[rank_env]") {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(map_rank_env("hydra", hydra_rank_three) ==
        Pairs{{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}});
  // Under srun a stale PMI_RANK must not win; srun's missing LOCALID leaves ezpz's value.
  CHECK(map_rank_env("srun", hydra_rank_three) == Pairs{{"RANK", "7"}});
  // An unknown launcher takes the first source present.
  CHECK(map_rank_env("", hydra_rank_three).front() ==
        std::pair<std::string, std::string>{"RANK", "3"});
}

TEST_CASE("Open MPI is told to forward only the paths that are set", "[launchers]") {
  LauncherInput input;
  input.exported = {"MASTER_ADDR"};
  input.environment = {{"PATH", "/usr/bin"}, {"HOME", "/root"}};
  // An unset LD_LIBRARY_PATH named with -x makes Open MPI warn on every run.
  CHECK(launcher_argv("openmpi", input) == std::vector<std::string>{"mpirun", "-n", "1", "-N", "1",
                                                                    "-x", "PATH", "-x",
                                                                    "MASTER_ADDR"});
  input.environment = {};
  CHECK(launcher_argv("openmpi", input) ==
        std::vector<std::string>{"mpirun", "-n", "1", "-N", "1", "-x", "MASTER_ADDR"});
}

TEST_CASE("launchers answer to the names users type", "[launchers]") {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"mpich", "hydra"}, {"hydra", "hydra"}, {"ompi", "openmpi"},      {"openmpi", "openmpi"},
      {"pals", "pals"},   {"srun", "srun"},   {"torchrun", "torchrun"}, {"lsf", "lsf"},
      {"MPICH", "MPICH"},  // unknown names stay, for the error to name
  };
  for (const auto& [typed, dialect] : rows) {
    INFO(typed);
    CHECK(canonical_launcher(typed) == dialect);
    CHECK(is_known_launcher(typed) == (typed != "lsf" && typed != "MPICH"));
  }
  CHECK(launcher_argv("ompi", LauncherInput{}) == launcher_argv("openmpi", LauncherInput{}));
  CHECK(launcher_argv("mpich", LauncherInput{}) == launcher_argv("hydra", LauncherInput{}));
  // Messages list each dialect once, by its own name.
  CHECK(known_launchers() == "pals, hydra, openmpi, srun, flux, torchrun, aprun");
}

TEST_CASE("each dialect's programs, in the order they are tried", "[launchers]") {
  using Names = std::vector<std::string_view>;
  CHECK(launcher_programs("hydra") == Names{"mpiexec", "mpiexec.hydra", "mpiexec.mpich"});
  CHECK(launcher_programs("mpich") == launcher_programs("hydra"));
  CHECK(launcher_programs("openmpi") == Names{"mpirun", "mpirun.openmpi", "mpiexec.openmpi"});
  CHECK(launcher_programs("pals") == Names{"mpiexec"});
  CHECK(launcher_programs("srun") == Names{"srun"});
  CHECK(launcher_programs("torchrun") == Names{"torchrun"});
  CHECK(launcher_programs("flux") == Names{"flux"});
  CHECK(launcher_programs("lsf").empty());
  for (std::string_view dialect :
       {"pals", "hydra", "openmpi", "srun", "flux", "torchrun", "aprun"}) {
    INFO(dialect);
    CHECK(launcher_argv(dialect, LauncherInput{}).front() == launcher_programs(dialect).front());
  }
  CHECK(expected_flavour("openmpi") == "Open MPI");
  CHECK(expected_flavour("torchrun") == "");
  CHECK(expected_flavour("flux") == "Flux");
  // torchrun on several hosts is started by Hydra's mpiexec, whose identity is checked.
  CHECK(program_dialect("torchrun", 2) == "hydra");
  CHECK(program_dialect("torchrun", 1) == "torchrun");
  CHECK(program_dialect("openmpi", 2) == "openmpi");
}

TEST_CASE("Open MPI as root needs both of its variables set to 1", "[launchers]") {
  const std::string both = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
  CHECK(missing_root_assignments("openmpi", {}) == both);
  CHECK(missing_root_assignments("ompi", {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}}) == both);
  CHECK(missing_root_assignments("openmpi", {{"OMPI_ALLOW_RUN_AS_ROOT", "1"},
                                             {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "yes"}}) == both);
  CHECK(missing_root_assignments("openmpi", {{"OMPI_ALLOW_RUN_AS_ROOT", "1"},
                                             {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}}) == "");
  CHECK(missing_root_assignments("hydra", {}) == "");
}
