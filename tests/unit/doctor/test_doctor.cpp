// `ezpz doctor`'s checks, from fabricated snapshots: every status and every
// message, word for word. Each row changes one thing in a healthy snapshot.
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "ezpz/doctor/doctor.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using namespace ezpz::doctor;

namespace {

constexpr std::uint64_t k_gib = 1024ull * 1024 * 1024;

const char* const k_probe_cpu =
    R"({"libtorch":"1.13.0","devices":{"cpu":1,"cuda":0,"xpu":0,"mps":0},"backends":["gloo"],)"
    R"("default_device":"cpu","default_backend":"gloo","threads":1,"cores":2})";
const char* const k_probe_cuda =
    R"({"libtorch":"2.1.0","devices":{"cpu":1,"cuda":4,"xpu":0,"mps":0},"backends":["gloo","nccl"],)"
    R"("default_device":"cuda","default_backend":"nccl","threads":1,"cores":64})";
const char* const k_hydra_version =
    "HYDRA build details:\n    Version:                                 4.0.2\n"
    "    Launchers available:                     ssh rsh fork slurm ll lsf sge manual persist\n";
const char* const k_nodefile = "/var/spool/pbs/aux/1.pbs";
// What doctor's Python probe prints for Debian's python3-torch.
const char* const k_imports_debian =
    R"({"python": "3.11.2", "torch": "1.13.0a0+git74dd6e3", "distributed": true, )"
    R"("backends": ["gloo", "mpi"]})";

// Hydra's hydra_pmi_proxy as doctor's probe finds it beside the launcher (or not).
Companion hydra_proxy(bool beside, bool link, std::string resolved, bool beside_resolved) {
  return {.name = "hydra_pmi_proxy",
          .beside = beside,
          .link = link,
          .resolved = std::move(resolved),
          .beside_resolved = beside_resolved};
}

ProgramRun exited(std::string path, int code, std::string out, std::string err = "") {
  ProgramRun run;
  run.path = std::move(path);
  run.exit_code = code;
  run.out = std::move(out);
  run.err = std::move(err);
  return run;
}

// A two-host PBS job on a generic PBS cluster where everything is fine.
Snapshot healthy() {
  Snapshot s;
  s.env = {{"PATH", "/usr/bin"}, {"PBS_JOBID", "1.pbs"}, {"PBS_NODEFILE", k_nodefile}};
  s.hostname = "x1";
  s.user = "alice";
  s.ezpz_version = "0.1.0 (abc)";
  s.scheduler = SchedulerKind::pbs;
  s.scheduler_rule = "PBS_JOBID is set";
  s.allocation = Allocation{
      SchedulerKind::pbs, "1.pbs", {"x1", "x2"}, 2, "PBS_NODEFILE lists each host 2 times", ""};
  s.hosts_source = fmt::format("PBS_NODEFILE {}", k_nodefile);
  s.listed_hosts = {"x1", "x1", "x2", "x2"};
  s.profile_files = {{"/m/generic-pbs.yaml", "scheduler: pbs\nlauncher: hydra\n"},
                     {"/m/local.yaml", "scheduler: local\nlauncher: hydra\n"}};
  s.launcher_program = "mpiexec";
  s.launcher_path = "/usr/bin/mpiexec";
  s.launcher_version = exited("/usr/bin/mpiexec", 0, k_hydra_version);
  s.trainer_path = "/b/ezpz-smoke";
  s.native_stack_tool = "/usr/bin/gdb";
  s.trainer_probe = exited("/b/ezpz-smoke", 0, k_probe_cpu);
  s.lookups = {{"x1", HostLookup::Result::resolved, "10.0.0.1"},
               {"x2", HostLookup::Result::resolved, "10.0.0.2"}};
  s.lookup_timeout_s = 0.5;
  s.storage.directory = "/tmp";
  s.storage.writable = true;
  s.storage.free_bytes = 10 * k_gib;
  s.storage.walk_limit_s = 0.3;
  s.limits = {{"open files", 65536, 65536},
              {"processes", 16384, std::nullopt},
              {"locked memory", std::nullopt, std::nullopt}};
  s.port.port = 40000;
  s.python.python3 = "/usr/bin/python3";
  s.python.imports = exited("/usr/bin/python3", 0, k_imports_debian);
  return s;
}

// A profile that matches host x1 and wants 4 CUDA GPUs, NCCL and PALS.
void on_polaris(Snapshot& s) {
  s.profile_files.push_back(
      {"/m/polaris.yaml",
       "match:\n  hostnames: [\"x*\"]\nscheduler: pbs\nlauncher: pals\ngpus_per_node: 4\n"
       "device: cuda\nbackend: nccl\n"});
}

// --launcher openmpi, and Open MPI's mpirun found.
void with_open_mpi(Snapshot& s) {
  s.launcher_flag = "openmpi";
  s.launcher_program = "mpirun";
  s.launcher_path = "/usr/bin/mpirun";
  s.launcher_version = exited("/usr/bin/mpirun", 0, "mpirun (Open MPI) 4.1.4\n\nReport bugs\n");
}

void run_local(Snapshot& s) {
  s.env.erase("PBS_JOBID");
  s.env.erase("PBS_NODEFILE");
  s.scheduler = SchedulerKind::local;
  s.scheduler_rule = "no PBS or Slurm job variables are set";
  s.allocation = Allocation{SchedulerKind::local, "", {"x1"}, std::nullopt, "", ""};
  s.hosts_source = "this host";
  s.listed_hosts.clear();
  s.lookups = {{"x1", HostLookup::Result::resolved, "127.0.1.1"}};
}

void with_venv(Snapshot& s, std::int64_t magic) {
  s.env["VIRTUAL_ENV"] = "/p/venv";
  s.python.prefix = "/p/venv";
  s.python.filesystem_magic = magic;
}

struct Row {
  std::string what;
  std::function<void(Snapshot&)> change;
  CheckResult expected;
};

void check_rows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    INFO(row.what);
    Snapshot s = healthy();
    row.change(s);
    std::vector<CheckResult> results = run_checks(s);
    REQUIRE(results.size() == 15);
    auto found = std::find_if(results.begin(), results.end(),
                              [&](const CheckResult& r) { return r.name == row.expected.name; });
    REQUIRE(found != results.end());
    CHECK(found->status == row.expected.status);
    CHECK(found->message == row.expected.message);
    CHECK(found->remedy == row.expected.remedy);
  }
}

// The probe's JSON line for `python3` with `fields` after "python".
ProgramRun imports(std::string python3, std::string fields) {
  return exited(std::move(python3), 0, fmt::format(R"({{"python": "3.11.2"{}}})", fields) + "\n");
}

}  // namespace

TEST_CASE("doctor: a healthy job passes every check, in report order", "[doctor]") {
  std::vector<CheckResult> results = run_checks(healthy());
  std::vector<CheckResult> expected = {
      {"scheduler", Status::ok, "pbs, job 1.pbs (PBS_JOBID is set)", ""},
      {"allocation", Status::ok,
       "2 hosts from PBS_NODEFILE /var/spool/pbs/aux/1.pbs: x[1-2]; each listed 2 times; all "
       "resolve",
       ""},
      {"profile", Status::ok,
       "generic-pbs from /m/generic-pbs.yaml (no hostname matched; generic profile for pbs)", ""},
      {"launcher", Status::ok,
       "/usr/bin/mpiexec: MPICH Hydra 4.0.2, the hydra launcher of profile generic-pbs", ""},
      {"gpus", Status::ok,
       "no GPUs found here; 2 ranks per host (PBS_NODEFILE lists each host 2 times); machine "
       "profile generic-pbs has no gpu_bind: devices left alone",
       ""},
      {"libraries", Status::ok, "profile generic-pbs names none", ""},
      {"trainer", Status::ok, "libtorch 1.13.0: cpu; backends gloo; default cpu with gloo", ""},
      {"storage", Status::ok,
       "/tmp writable, 10.0 GiB free; no venv or conda environment is active to stage", ""},
      {"limits", Status::ok, "open files 65536, processes 16384, locked memory unlimited", ""},
      {"port", Status::ok, "MASTER_PORT is unset: ezpz picks a free port (like 40000)", ""},
      {"python", Status::ok, "no venv or conda environment is active; python3 is /usr/bin/python3",
       ""},
      {"torch", Status::ok,
       "/usr/bin/python3: Python 3.11.2, torch 1.13.0a0+git74dd6e3; backends gloo, mpi", ""},
      {"modules", Status::ok, "no module system (no module function, LMOD_CMD or MODULESHOME)", ""},
      {"tracking", Status::ok,
       "W&B: no credentials (WANDB_API_KEY, ~/.netrc); runs that log to W&B need wandb login", ""},
      {"stacks", Status::ok,
       "hung ranks' stacks: Python's by faulthandler, native ones by /usr/bin/gdb", ""},
  };
  CHECK(results == expected);
  CHECK(worst(results) == Status::ok);
}

TEST_CASE("doctor: scheduler detected, and consistent", "[doctor]") {
  const std::string remedy_pbs =
      "run inside the PBS job (qsub -I, or a job script), or pass --scheduler local";
  check_rows({
      {"unknown EZPZ_SCHEDULER",
       [](Snapshot& s) {
         s.scheduler.reset();
         s.scheduler_error =
             "EZPZ_SCHEDULER: unknown scheduler \"lsf\"; expected pbs, slurm, flux or local";
       },
       {"scheduler", Status::error,
        "EZPZ_SCHEDULER: unknown scheduler \"lsf\"; expected pbs, slurm, flux or local",
        "pass --scheduler pbs, slurm, flux or local, or unset EZPZ_SCHEDULER"}},
      {"PBS_JOBID without PBS_NODEFILE",
       [](Snapshot& s) {
         s.env.erase("PBS_NODEFILE");
         s.allocation.reset();
       },
       {"scheduler", Status::error, "pbs (PBS_JOBID is set), but PBS_NODEFILE is not set",
        remedy_pbs}},
      {"PBS_NODEFILE unreadable",
       [](Snapshot& s) {
         s.allocation.reset();
         s.hosts_error = "PBS_NODEFILE: /var/spool/pbs/aux/1.pbs: No such file or directory";
       },
       {"scheduler", Status::error,
        "pbs (PBS_JOBID is set), but PBS_NODEFILE: /var/spool/pbs/aux/1.pbs: No such file or "
        "directory",
        remedy_pbs}},
      {"Slurm without a nodelist",
       [](Snapshot& s) {
         s.env = {{"SLURM_JOB_ID", "7"}};
         s.scheduler = SchedulerKind::slurm;
         s.scheduler_rule = "SLURM_JOB_ID is set";
         s.allocation.reset();
       },
       {"scheduler", Status::error,
        "slurm (SLURM_JOB_ID is set), but neither SLURM_JOB_NODELIST nor SLURM_NODELIST is set",
        "run inside the Slurm job (salloc, or an sbatch script), or pass --scheduler local"}},
      {"Slurm with a nodelist",
       [](Snapshot& s) {
         s.env = {{"SLURM_JOB_ID", "7"}, {"SLURM_NODELIST", "x[1-2]"}};
         s.scheduler = SchedulerKind::slurm;
         s.scheduler_rule = "SLURM_JOB_ID is set";
         s.allocation->job_id = "7";
       },
       {"scheduler", Status::ok, "slurm, job 7 (SLURM_JOB_ID is set)", ""}},
      {"PBS and Slurm variables both set",
       [](Snapshot& s) { s.env["SLURM_JOB_ID"] = "9"; },
       {"scheduler", Status::warn, "pbs, job 1.pbs (PBS_JOBID is set); SLURM_JOB_ID is set too",
        "pass --scheduler (or set EZPZ_SCHEDULER) to say which scheduler runs this job"}},
      {"a Flux instance inside a PBS job",
       [](Snapshot& s) {
         s.env["FLUX_URI"] = "local:///tmp/flux-1/local-0";
         s.scheduler = SchedulerKind::flux;
         s.scheduler_rule = "FLUX_URI is set";
         s.allocation->job_id = "f2x5";
       },
       {"scheduler", Status::warn, "flux, job f2x5 (FLUX_URI is set); PBS_JOBID is set too",
        "pass --scheduler (or set EZPZ_SCHEDULER) to say which scheduler runs this job"}},
      {"--scheduler pbs inside a Flux instance",
       [](Snapshot& s) { s.env["FLUX_URI"] = "local:///tmp/flux-1/local-0"; },
       {"scheduler", Status::warn, "pbs, job 1.pbs (PBS_JOBID is set); FLUX_URI is set too",
        "pass --scheduler (or set EZPZ_SCHEDULER) to say which scheduler runs this job"}},
      {"no scheduler",
       run_local,
       {"scheduler", Status::ok, "local: this host alone (no PBS or Slurm job variables are set)",
        ""}},
      {"--scheduler local inside a job",
       [](Snapshot& s) {
         s.scheduler = SchedulerKind::local;
         s.scheduler_rule = "--scheduler local";
       },
       {"scheduler", Status::ok, "local: this host alone (--scheduler local)", ""}},
  });
}

TEST_CASE("doctor: allocation readable, duplicates counted, names resolve", "[doctor]") {
  const std::string hosts = "2 hosts from PBS_NODEFILE /var/spool/pbs/aux/1.pbs: x[1-2]";
  check_rows({
      {"empty nodefile",
       [](Snapshot& s) {
         s.allocation.reset();
         s.allocation_error = "PBS_NODEFILE /var/spool/pbs/aux/1.pbs: no hosts in file";
       },
       {"allocation", Status::error, "PBS_NODEFILE /var/spool/pbs/aux/1.pbs: no hosts in file",
        "fix the variable or file named here: ezpz launch stops at it too"}},
      {"uneven repeats",
       [](Snapshot& s) {
         s.listed_hosts = {"x1", "x1", "x1", "x2"};
         s.allocation->slots_per_host.reset();
       },
       {"allocation", Status::warn,
        hosts + "; 2 repeated lines, not the same number for every host",
        "ezpz starts each host once: check the job's resource request (select, mpiprocs)"}},
      {"each host once",
       [](Snapshot& s) {
         s.listed_hosts = {"x1", "x2"};
         s.allocation->slots_per_host.reset();
       },
       {"allocation", Status::ok, hosts + "; all resolve", ""}},
      {"a host that does not resolve",
       [](Snapshot& s) {
         s.lookups[1] = {"x2", HostLookup::Result::failed, "Name or service not known"};
       },
       {"allocation", Status::error, hosts + "; each listed 2 times; 1 of 2 do not resolve: x2",
        "launchers reach nodes by these names: check the nodefile, /etc/hosts or DNS"}},
      {"a PBS nodefile that does not list this host (PBS_JOBID kept from another job)",
       [](Snapshot& s) {
         s.hostname = "x9";
         s.lookups = {{"x1", HostLookup::Result::resolved, "10.0.0.1"},
                      {"x2", HostLookup::Result::resolved, "10.0.0.2"}};
       },
       {"allocation", Status::error,
        hosts + "; each listed 2 times; this host (x9) is not one of them",
        "PBS_JOBID=1.pbs is not this node's job: unset PBS_JOBID and PBS_NODEFILE, or run inside "
        "the job"}},
      {"seven hosts that do not resolve",
       [](Snapshot& s) {
         s.allocation->hosts.clear();
         s.lookups.clear();
         for (int i = 1; i <= 7; ++i) {
           std::string host = fmt::format("y{}", i);
           s.allocation->hosts.push_back(host);
           s.lookups.push_back({host, HostLookup::Result::failed, "Name or service not known"});
         }
         s.listed_hosts = s.allocation->hosts;
       },
       {"allocation", Status::error,
        "7 hosts from PBS_NODEFILE /var/spool/pbs/aux/1.pbs: y[1-7]; 7 of 7 do not resolve: y1, "
        "y2, y3, y4, y5 and 2 more",
        "launchers reach nodes by these names: check the nodefile, /etc/hosts or DNS"}},
      {"a slow name server",
       [](Snapshot& s) { s.lookups[0].result = HostLookup::Result::timed_out; },
       {"allocation", Status::warn,
        hosts + "; each listed 2 times; 1 of 2 did not resolve within 0.5 s: x1",
        "slow name lookups delay every launch: check /etc/resolv.conf, or list the nodes in "
        "/etc/hosts"}},
      {"this host's name does not resolve",
       [](Snapshot& s) {
         run_local(s);
         s.lookups[0] = {"x1", HostLookup::Result::failed, "Name or service not known"};
       },
       {"allocation", Status::warn, "1 host from this host: x1; 1 of 1 do not resolve: x1",
        "Gloo finds its network interface by this name: add it to /etc/hosts, or set "
        "GLOO_SOCKET_IFNAME"}},
      {"this host resolves",
       run_local,
       {"allocation", Status::ok, "1 host from this host: x1; it resolves", ""}},
  });
}

TEST_CASE("doctor: which machine profile applies, and files that do not load", "[doctor]") {
  check_rows({
      {"profile directory unreadable",
       [](Snapshot& s) {
         s.profile_files.clear();
         s.profiles_error = "/m/x.yaml: Permission denied";
       },
       {"profile", Status::error, "/m/x.yaml: Permission denied",
        "make the profile directories readable (EZPZ_MACHINES_PATH, ~/.config/ezpz/machines)"}},
      {"a broken profile file",
       [](Snapshot& s) {
         s.profile_files.push_back({"/u/broken.yaml", "launcher: pals\ngpus_per_node: four\n"});
         s.profile_files.push_back({"/u/typo.yaml", "launcher: pals\ngpus_per_nod: 4\n"});
       },
       {"profile", Status::error,
        "2 profile files did not load: /u/broken.yaml:2: gpus_per_node: expected an integer, got "
        "\"four\"; /u/typo.yaml:2: gpus_per_nod: unknown key; did you mean \"gpus_per_node\"?",
        "fix or remove the file: ezpz launch stops at a profile that does not load"}},
      {"invalid YAML",
       [](Snapshot& s) {
         s.profile_files.push_back({"/u/bad.yaml", "launcher: [pals\n"});
       },
       {"profile", Status::error,
        "1 profile file did not load: /u/bad.yaml:2: invalid YAML: end of sequence flow not "
        "found",
        "fix or remove the file: ezpz launch stops at a profile that does not load"}},
      {"unknown --machine",
       [](Snapshot& s) { s.machine_flag = "nope"; },
       {"profile", Status::error,
        "unknown machine \"nope\" (from --machine); known: generic-pbs, local",
        "pass --machine with a known name, or add machines/NAME.yaml (see machines/README.md)"}},
      {"hostname match",
       on_polaris,
       {"profile", Status::ok,
        "polaris from /m/polaris.yaml (hostname x1 matches \"x*\" in /m/polaris.yaml)", ""}},
      {"a PBS machine's profile on a login node",
       [](Snapshot& s) {
         on_polaris(s);
         run_local(s);
       },
       {"profile", Status::warn,
        "polaris from /m/polaris.yaml (hostname x1 matches \"x*\" in /m/polaris.yaml); it is for "
        "pbs jobs, but the scheduler is local",
        "run inside a pbs job, or pass --machine for this system"}},
  });
}

TEST_CASE("doctor: the launcher exists and is the implementation the dialect needs", "[doctor]") {
  check_rows({
      {"no profile",
       [](Snapshot& s) { s.machine_flag = "nope"; },
       {"launcher", Status::error, "not chosen: no machine profile applies",
        "fix the profile check above"}},
      {"unknown --launcher",
       [](Snapshot& s) { s.launcher_flag = "mpirun"; },
       {"launcher", Status::error,
        "unknown launcher \"mpirun\"; expected one of pals, hydra, openmpi, srun, flux, torchrun, "
        "aprun",
        "pass --launcher with one of those names"}},
      {"not on PATH",
       [](Snapshot& s) { s.launcher_path.reset(); },
       {"launcher", Status::error,
        "mpiexec is not on PATH (the hydra launcher of profile generic-pbs)",
        "install MPICH (apt-get install mpich) or load its module, or pass --launcher"}},
      {"aprun not on PATH: ALPS is a Cray system's",
       [](Snapshot& s) {
         s.launcher_flag = "aprun";
         s.launcher_program = "aprun";
         s.launcher_path.reset();
       },
       {"launcher", Status::error, "aprun is not on PATH (the aprun launcher (--launcher))",
        "run on a login or MOM node of the Cray ALPS system (aprun comes with ALPS), or pass "
        "--launcher"}},
      {"--version fails",
       [](Snapshot& s) {
         s.launcher_version = exited("/usr/bin/mpiexec", 1, "", "\nmpiexec: fatal: no config\n");
       },
       {"launcher", Status::warn,
        "/usr/bin/mpiexec: mpiexec --version exit 1: mpiexec: fatal: no config",
        "run /usr/bin/mpiexec --version by hand: a launcher that cannot print its version may "
        "not start jobs either"}},
      {"--version hangs",
       [](Snapshot& s) {
         s.launcher_version = ProgramRun{};
         s.launcher_version.timed_out = true;
         s.launcher_version.timeout_s = 5;
       },
       {"launcher", Status::warn, "/usr/bin/mpiexec: mpiexec --version did not finish within 5 s",
        "run /usr/bin/mpiexec --version by hand: a launcher that cannot print its version may "
        "not start jobs either"}},
      {"MPICH's mpiexec where PALS is needed",
       [](Snapshot& s) { on_polaris(s); },
       {"launcher", Status::error,
        "/usr/bin/mpiexec is MPICH Hydra 4.0.2, but the pals launcher of profile polaris needs "
        "Cray PALS",
        "put Cray PALS's mpiexec first on PATH (check module list), or pass --launcher hydra"}},
      {"an mpiexec nobody knows",
       [](Snapshot& s) {
         s.launcher_version = exited("/usr/bin/mpiexec", 0, "mpiexec 9.9 (acme)\n");
       },
       {"launcher", Status::warn,
        "/usr/bin/mpiexec: --version names no launcher ezpz knows: \"mpiexec 9.9 (acme)\"",
        "make sure it is MPICH Hydra: the hydra launcher of profile generic-pbs passes it MPICH "
        "Hydra's flags"}},
      {"Hydra with its hydra_pmi_proxy beside it",
       [](Snapshot& s) { s.companion = hydra_proxy(true, false, "/usr/bin/mpiexec.hydra", true); },
       {"launcher", Status::ok,
        "/usr/bin/mpiexec: MPICH Hydra 4.0.2, the hydra launcher of profile generic-pbs", ""}},
      {"Hydra run through a link in a directory without hydra_pmi_proxy",
       [](Snapshot& s) {
         s.launcher_path = "/opt/my bin/mpiexec";
         s.companion = hydra_proxy(false, true, "/usr/bin/mpiexec.hydra", true);
       },
       {"launcher", Status::error,
        "/opt/my bin/mpiexec: MPICH Hydra 4.0.2, the hydra launcher of profile generic-pbs; but "
        "/opt/my bin holds no hydra_pmi_proxy, which it starts from the directory it was run "
        "from: no rank can start",
        "run it from its own directory: --launcher-program /usr/bin/mpiexec.hydra, or put "
        "/usr/bin first on PATH"}},
      {"Hydra linked, without hydra_pmi_proxy anywhere",
       [](Snapshot& s) {
         s.launcher_path = "/opt/mpich/bin/mpiexec";
         s.companion = hydra_proxy(false, true, "/opt/mpich/bin/mpiexec.hydra", false);
       },
       {"launcher", Status::error,
        "/opt/mpich/bin/mpiexec: MPICH Hydra 4.0.2, the hydra launcher of profile generic-pbs; "
        "but /opt/mpich/bin holds no hydra_pmi_proxy, which it starts from the directory it was "
        "run from: no rank can start",
        "put the bin directory of an installation with hydra_pmi_proxy beside its mpiexec first "
        "on PATH"}},
      {"Hydra's mpiexec not a link, without hydra_pmi_proxy: a site's wrapper, perhaps",
       [](Snapshot& s) {
         s.launcher_path = "/site/bin/mpiexec";
         s.companion = hydra_proxy(false, false, "/site/bin/mpiexec", false);
       },
       {"launcher", Status::warn,
        "/site/bin/mpiexec: MPICH Hydra 4.0.2, the hydra launcher of profile generic-pbs; but "
        "/site/bin holds no hydra_pmi_proxy, which it starts from the directory it was run from: "
        "unless mpiexec is a wrapper that runs it from elsewhere, no rank can start",
        "put the bin directory of an installation with hydra_pmi_proxy beside its mpiexec first "
        "on PATH"}},
      {"Open MPI chosen with --launcher",
       with_open_mpi,
       {"launcher", Status::ok,
        "/usr/bin/mpirun: Open MPI 4.1.4, the openmpi launcher (--launcher)", ""}},
      {"Debian's mpirun.openmpi calls itself OpenRTE",
       [](Snapshot& s) {
         s.launcher_flag = "ompi";
         s.launcher_program = "mpirun.openmpi";
         s.launcher_path = "/usr/bin/mpirun.openmpi";
         s.launcher_version = exited("/usr/bin/mpirun.openmpi", 0,
                                     "mpirun.openmpi (OpenRTE) 4.1.4\n\nReport bugs\n");
       },
       {"launcher", Status::ok,
        "/usr/bin/mpirun.openmpi: Open MPI 4.1.4, the openmpi launcher (--launcher)", ""}},
      {"Open MPI as root, without its variables",
       [](Snapshot& s) {
         with_open_mpi(s);
         s.root = true;
         s.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
       },
       {"launcher", Status::warn,
        "/usr/bin/mpirun: Open MPI 4.1.4, the openmpi launcher (--launcher); as root, Open MPI "
        "refuses to start without OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
        "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 to run as root (ezpz "
        "never sets them)"}},
      {"Open MPI as root, told it may",
       [](Snapshot& s) {
         with_open_mpi(s);
         s.root = true;
         s.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
         s.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
       },
       {"launcher", Status::ok,
        "/usr/bin/mpirun: Open MPI 4.1.4, the openmpi launcher (--launcher)", ""}},
      {"srun",
       [](Snapshot& s) {
         s.launcher_flag = "srun";
         s.launcher_program = "srun";
         s.launcher_path = "/usr/bin/srun";
         s.launcher_version = exited("/usr/bin/srun", 0, "slurm 22.05.8\n");
       },
       {"launcher", Status::ok, "/usr/bin/srun: Slurm 22.05.8, the srun launcher (--launcher)",
        ""}},
      {"Debian's srun",
       [](Snapshot& s) {
         s.launcher_flag = "srun";
         s.launcher_program = "srun";
         s.launcher_path = "/usr/bin/srun";
         s.launcher_version = exited("/usr/bin/srun", 0, "slurm-wlm 22.05.8\n");
       },
       {"launcher", Status::ok, "/usr/bin/srun: Slurm 22.05.8, the srun launcher (--launcher)",
        ""}},
      {"torchrun starts a rank",
       [](Snapshot& s) {
         s.launcher_flag = "torchrun";
         s.launcher_program = "torchrun";
         s.launcher_path = "/usr/bin/torchrun";
         s.launcher_version = ProgramRun{};
         s.torchrun_trial = exited("/usr/bin/torchrun", 0, "");
       },
       {"launcher", Status::ok,
        "/usr/bin/torchrun: starts a rank, the torchrun launcher (--launcher)", ""}},
      {"torchrun cannot start a rank: the traceback's last line",
       [](Snapshot& s) {
         s.launcher_flag = "torchrun";
         s.launcher_program = "torchrun";
         s.launcher_path = "/opt/my env/bin/torchrun";
         s.torchrun_trial = exited("/opt/my env/bin/torchrun", 1, "",
                                   "Traceback (most recent call last):\n"
                                   "  File \"/opt/my env/bin/torchrun\", line 5, in <module>\n"
                                   "ModuleNotFoundError: No module named 'torch'\n\n");
       },
       {"launcher", Status::error,
        "/opt/my env/bin/torchrun cannot start a rank: exit 1: ModuleNotFoundError: No module "
        "named 'torch'",
        "run '/opt/my env/bin/torchrun' --standalone --nnodes=1 --nproc_per_node=1 "
        "--redirects=9:0 --tee=9:0 --monitor_interval=0.1 --no_python true to see why; torchrun "
        "must come from the Python environment the ranks use, with its torch"}},
      {"torchrun that hangs",
       [](Snapshot& s) {
         s.launcher_flag = "torchrun";
         s.launcher_program = "torchrun";
         s.launcher_path = "/usr/bin/torchrun";
         s.torchrun_trial.path = "/usr/bin/torchrun";
         s.torchrun_trial.timed_out = true;
         s.torchrun_trial.timeout_s = 15;
       },
       {"launcher", Status::error,
        "/usr/bin/torchrun cannot start a rank: did not finish within 15 s",
        "run /usr/bin/torchrun --standalone --nnodes=1 --nproc_per_node=1 --redirects=9:0 "
        "--tee=9:0 --monitor_interval=0.1 --no_python true to see why; torchrun must come from "
        "the Python environment the ranks use, with its torch"}},
  });
}

TEST_CASE("doctor: the trainer runs, and its devices agree with the profile", "[doctor]") {
  const std::string remedy =
      "run /b/ezpz-smoke --probe by hand; ldd /b/ezpz-smoke shows missing libraries";
  check_rows({
      {"not built",
       [](Snapshot& s) {
         s.trainer_path.reset();
         s.trainer_error =
             "ezpz-smoke not found in /b/ezpz-smoke or /b/../libexec/ezpz/ezpz-smoke: "
             "build it with libtorch (cmake -DEZPZ_WITH_SMOKE=ON)";
       },
       {"trainer", Status::warn,
        "ezpz-smoke not found in /b/ezpz-smoke or /b/../libexec/ezpz/ezpz-smoke: build it with "
        "libtorch (cmake -DEZPZ_WITH_SMOKE=ON)",
        "ezpz test needs it; ezpz launch does not"}},
      {"a missing library",
       [](Snapshot& s) {
         s.trainer_probe = exited("/b/ezpz-smoke", 127, "",
                                  "ezpz-smoke: error while loading shared libraries: libtorch.so: "
                                  "cannot open shared object file\n");
       },
       {"trainer", Status::error,
        "/b/ezpz-smoke --probe exit 127: ezpz-smoke: error while loading shared libraries: "
        "libtorch.so: cannot open shared object file",
        remedy}},
      {"a hung driver",
       [](Snapshot& s) {
         s.trainer_probe = ProgramRun{};
         s.trainer_probe.timed_out = true;
         s.trainer_probe.timeout_s = 20;
       },
       {"trainer", Status::error, "/b/ezpz-smoke --probe did not finish within 20 s", remedy}},
      {"a crash",
       [](Snapshot& s) {
         s.trainer_probe = ProgramRun{};
         s.trainer_probe.signal = 11;
       },
       {"trainer", Status::error, "/b/ezpz-smoke --probe died of signal 11", remedy}},
      {"could not start",
       [](Snapshot& s) {
         s.trainer_probe = ProgramRun{};
         s.trainer_probe.start_error = "/b/ezpz-smoke: Permission denied";
       },
       {"trainer", Status::error,
        "/b/ezpz-smoke --probe could not start: /b/ezpz-smoke: Permission denied", remedy}},
      {"no JSON",
       [](Snapshot& s) { s.trainer_probe = exited("/b/ezpz-smoke", 0, "hello\n"); },
       {"trainer", Status::error, "/b/ezpz-smoke --probe printed no probe JSON: \"hello\"",
        remedy}},
      {"no GPU where the profile expects 4",
       on_polaris,
       {"trainer", Status::warn,
        "libtorch 1.13.0: cpu; backends gloo; default cpu with gloo; profile polaris expects 4 "
        "cuda devices per node, libtorch sees 0 here",
        "run ezpz doctor on a compute node of the job; check the driver (nvidia-smi, rocm-smi, "
        "xpu-smi)"}},
      {"the profile's GPUs",
       [](Snapshot& s) {
         on_polaris(s);
         s.trainer_probe = exited("/b/ezpz-smoke", 0, k_probe_cuda);
       },
       {"trainer", Status::ok,
        "libtorch 2.1.0: cpu, cuda x4; backends gloo, nccl; default cuda with nccl", ""}},
      {"the profile's backend missing",
       [](Snapshot& s) {
         on_polaris(s);
         std::string probe = k_probe_cuda;
         probe.replace(probe.find(R"(,"nccl"])"), 8, "]");
         s.trainer_probe = exited("/b/ezpz-smoke", 0, probe);
       },
       {"trainer", Status::warn,
        "libtorch 2.1.0: cpu, cuda x4; backends gloo; default cuda with nccl; profile polaris "
        "uses backend nccl, which this libtorch lacks",
        "build ezpz-smoke against a libtorch with nccl"}},
  });
}

namespace {

// This node of a Polaris job (the bundled profile's placement keys), where the vendor tool
// lists `found` GPUs and the nodefile says nothing of ranks per host.
std::function<void(Snapshot&)> polaris_node(std::optional<int> found, const Env& more = {}) {
  return [=](Snapshot& s) {
    s.profile_files.push_back(
        {"/m/polaris.yaml",
         "match:\n  hostnames: [\"x*\"]\nscheduler: pbs\nlauncher: pals\ngpus_per_node: 4\n"
         "device: cuda\nbackend: nccl\ncpu_bind:\n  style: depth\n  depth: 8\n"
         "gpu_bind:\n  order: [\"3\", \"2\", \"1\", \"0\"]\n  ranks_per_gpu: 2\n"});
    s.allocation->slots_per_host.reset();
    s.accelerators = found;
    for (const auto& [name, value] : more) s.env[name] = value;
  };
}

// A profile `yaml` that matches this host (x1), on a node where the tool lists `found` GPUs.
std::function<void(Snapshot&)> gpu_node(std::string yaml, int found, const Env& more = {}) {
  return [=](Snapshot& s) {
    s.profile_files.push_back({"/m/site.yaml", "match:\n  hostnames: [\"x*\"]\n" + yaml});
    s.allocation->slots_per_host.reset();
    s.accelerators = found;
    for (const auto& [name, value] : more) s.env[name] = value;
  };
}

constexpr const char* k_polaris_ranks =
    "1 GPU per rank from machine profile polaris, in order 3,2,1,0 (ezpz-rankenv sets "
    "CUDA_VISIBLE_DEVICES): local rank 0: GPU 3, cores 0-7; 1: GPU 2, cores 8-15; 2: GPU 1, "
    "cores 16-23; 3: GPU 0, cores 24-31";
constexpr const char* k_driver =
    "run ezpz doctor on a compute node of the job; check the driver (nvidia-smi, rocm-smi, "
    "xpu-smi)";

}  // namespace

TEST_CASE("doctor: the GPU placement ezpz launch would use on this node", "[doctor]") {
  const std::string polaris_head =
      "4 GPUs found here, profile polaris has 4; 4 ranks per host (machine profile polaris); ";
  check_rows({
      {"each rank its own GPU, in the profile's order, on its cores",
       polaris_node(4),
       {"gpus", Status::ok, polaris_head + k_polaris_ranks, ""}},
      {"no tool answered: fewer GPUs than the profile's",
       polaris_node(std::nullopt),
       {"gpus", Status::warn,
        std::string("only 0 of profile polaris's 4 GPUs found here; 4 ranks per host (machine "
                    "profile polaris); ") +
            k_polaris_ranks,
        k_driver}},
      {"2 of 4 found",
       polaris_node(2),
       {"gpus", Status::warn,
        std::string("only 2 of profile polaris's 4 GPUs found here; 4 ranks per host (machine "
                    "profile polaris); ") +
            k_polaris_ranks,
        k_driver}},
      {"a user's mask that leaves ranks without a GPU",
       polaris_node(4, {{"CUDA_VISIBLE_DEVICES", "1"}}),
       {"gpus", Status::warn,
        "4 GPUs found here, profile polaris has 4; 4 ranks per host (machine profile polaris): 4 "
        "ranks per host at 1 GPU each need 4 GPUs, but CUDA_VISIBLE_DEVICES=1 has 1; pass "
        "--no-gpu-bind to leave devices alone",
        "set CUDA_VISIBLE_DEVICES to a device for every rank, run fewer ranks per host (--ppn), "
        "or unset it"}},
      {"a user's mask of 2: two ranks share each, in the profile's order",
       polaris_node(4, {{"CUDA_VISIBLE_DEVICES", "1,3"}}),
       {"gpus", Status::ok,
        polaris_head +
            "2 ranks per GPU from CUDA_VISIBLE_DEVICES=1,3, in order 3,1 (ezpz-rankenv sets "
            "CUDA_VISIBLE_DEVICES): local rank 0: GPU 3, cores 0-7; 1: GPU 3, cores 8-15; 2: "
            "GPU 1, cores 16-23; 3: GPU 1, cores 24-31",
        ""}},
      {"more ranks per host than GPUs and sharing allows",
       polaris_node(4, {{"NGPU_PER_HOST", "12"}}),
       {"gpus", Status::warn,
        "4 GPUs found here, profile polaris has 4; 12 ranks per host (NGPU_PER_HOST=12): 12 "
        "ranks per host at 1 GPU each need 12 GPUs, but machine profile polaris has 4; pass "
        "--no-gpu-bind to leave devices alone",
        "run fewer ranks per host (--ppn), or pass --no-gpu-bind"}},
      {"a bad NGPU_PER_HOST",
       polaris_node(4, {{"NGPU_PER_HOST", "four"}}),
       {"gpus", Status::warn,
        "4 GPUs found here, profile polaris has 4; NGPU_PER_HOST=four: expected a positive "
        "integer",
        "fix the variable named here: ezpz launch stops at it too"}},
      {"torchrun starts the ranks itself: devices left alone",
       [](Snapshot& s) {
         polaris_node(4)(s);
         s.launcher_flag = "torchrun";
       },
       {"gpus", Status::ok,
        polaris_head + "torchrun starts the ranks without ezpz-rankenv: devices left alone", ""}},
      {"the launcher binds (srun --gpu-bind), cores in depth blocks",
       gpu_node("launcher: srun\ngpus_per_node: 2\ndevice: rocm\ncpu_bind:\n  style: depth\n"
                "  depth: 7\ngpu_bind:\n  order: [\"1\", \"0\"]\n  launcher_bind: closest\n",
                2),
       {"gpus", Status::ok,
        "2 GPUs found here, profile site has 2; 2 ranks per host (machine profile site); 1 GPU "
        "per rank from machine profile site, in order 1,0 (srun binds them: closest): local "
        "rank 0: GPU 1, cores 0-6; 1: GPU 0, cores 7-13",
        ""}},
      {"cores split by a reserved core, no cpu binding",
       gpu_node("launcher: pals\ngpus_per_node: 2\ndevice: xpu\ncpu_bind:\n  style: list\n"
                "  sockets: 1\n  cores_per_socket: 8\n  reserved_cores: [0]\n"
                "gpu_bind:\n  order: [\"0.0\", \"0.1\"]\n",
                2),
       {"gpus", Status::ok,
        "2 GPUs found here, profile site has 2; 2 ranks per host (machine profile site); 1 GPU "
        "per rank from machine profile site, in order 0.0,0.1 (ezpz-rankenv sets "
        "ZE_AFFINITY_MASK): local rank 0: GPU 0.0, cores 1-3; 1: GPU 0.1, cores 4-6",
        ""}},
      {"no cpu binding: cores not bound",
       gpu_node("launcher: pals\ngpus_per_node: 1\ndevice: cuda\ngpu_bind:\n  order: [\"0\"]\n", 1),
       {"gpus", Status::ok,
        "1 GPU found here, profile site has 1; 1 rank per host (machine profile site); 1 GPU per "
        "rank from machine profile site, in order 0 (ezpz-rankenv sets CUDA_VISIBLE_DEVICES): "
        "local rank 0: GPU 0, cores not bound",
        ""}},
      {"no gpu_bind, and fewer GPUs than the profile's",
       on_polaris,
       {"gpus", Status::warn,
        "only 0 of profile polaris's 4 GPUs found here; 2 ranks per host (PBS_NODEFILE lists "
        "each host 2 times); machine profile polaris has no gpu_bind: devices left alone",
        k_driver}},
      {"no profile applies",
       [](Snapshot& s) { s.machine_flag = "nowhere"; },
       {"gpus", Status::ok, "no machine profile applies: nothing to place", ""}},
  });
}

TEST_CASE("doctor: the libraries the site puts on LD_LIBRARY_PATH are there", "[doctor]") {
  // Polaris's profile: NCCL's network plugin from the directory ALCF's NCCL page names.
  const auto polaris = [](std::string found) {
    return [=](Snapshot& s) {
      s.machine_flag = "polaris";
      s.profile_files.push_back(
          {"/m/polaris.yaml",
           "launcher: pals\nlibraries:\n  libnccl-net.so: /soft/aws-ofi-nccl/lib\n"
           "  libhwloc.so: /soft/hwloc/lib\n"});
      s.libraries_found = {{"libnccl-net.so", found}, {"libhwloc.so", "/soft/hwloc/lib"}};
    };
  };
  check_rows({
      {"both there",
       polaris("/soft/aws-ofi-nccl/lib"),
       {"libraries", Status::ok,
        "libnccl-net.so in /soft/aws-ofi-nccl/lib; libhwloc.so in /soft/hwloc/lib", ""}},
      {"the plugin missing",
       polaris(""),
       {"libraries", Status::warn,
        "not in any LD_LIBRARY_PATH directory: libnccl-net.so (profile polaris has it from "
        "/soft/aws-ofi-nccl/lib)",
        "export LD_LIBRARY_PATH=/soft/aws-ofi-nccl/lib:$LD_LIBRARY_PATH (the profile says why)"}},
      {"no profile applies",
       [](Snapshot& s) { s.machine_flag = "nowhere"; },
       {"libraries", Status::ok, "no machine profile applies", ""}},
  });
}

TEST_CASE("doctor: node-local storage for yeet", "[doctor]") {
  auto venv = [](std::uint64_t bytes, bool capped) {
    return [=](Snapshot& s) {
      s.storage.source = "/p/venv";
      s.storage.destination = "/tmp/venv";
      s.storage.source_bytes = bytes;
      s.storage.source_files = 1234;
      s.storage.walk_capped = capped;
    };
  };
  const std::string remedy =
      "give ezpz yeet a destination on node-local storage: ezpz yeet SRC DST";
  check_rows({
      {"no such directory",
       [](Snapshot& s) { s.storage.error = "/tmp: No such file or directory"; },
       {"storage", Status::error, "/tmp: No such file or directory", remedy}},
      {"read-only",
       [](Snapshot& s) { s.storage.writable = false; },
       {"storage", Status::error, "/tmp is not writable", remedy}},
      {"fits",
       venv(3 * k_gib / 2, false),
       {"storage", Status::ok,
        "/tmp writable, 10.0 GiB free; /p/venv is 1.5 GiB (1234 files), staged to /tmp/venv", ""}},
      {"one file",
       [&](Snapshot& s) {
         venv(3 * k_gib / 2, false)(s);
         s.storage.source_files = 1;
       },
       {"storage", Status::ok,
        "/tmp writable, 10.0 GiB free; /p/venv is 1.5 GiB (1 file), staged to /tmp/venv", ""}},
      {"counted in part",
       venv(3 * k_gib / 2, true),
       {"storage", Status::ok,
        "/tmp writable, 10.0 GiB free; /p/venv is at least 1.5 GiB (1234 files counted in 0.3 s), "
        "staged to /tmp/venv",
        ""}},
      {"too big",
       venv(12 * k_gib, false),
       {"storage", Status::error,
        "/tmp writable, 10.0 GiB free; /p/venv is 12.0 GiB (1234 files), more than fits",
        "free space in /tmp, or " + remedy}},
      {"unreadable environment",
       [&](Snapshot& s) {
         venv(0, false)(s);
         s.storage.walk_error = "/p/venv: Permission denied";
       },
       {"storage", Status::warn,
        "/tmp writable, 10.0 GiB free; the size of /p/venv is unknown: /p/venv: Permission denied",
        "make /p/venv readable"}},
  });
}

TEST_CASE("doctor: limits and MASTER_PORT", "[doctor]") {
  check_rows({
      {"few open files, hard limit higher",
       [](Snapshot& s) {
         s.limits[0] = {"open files", 1024, 524288};
       },
       {"limits", Status::warn,
        "open files 1024, processes 16384, locked memory unlimited; open files 1024 is below 4096 "
        "(each rank opens many files and sockets)",
        "ulimit -n 4096 in the job script"}},
      {"few open files and processes, hard limits too",
       [](Snapshot& s) {
         s.limits[0] = {"open files", 1024, 2048};
         s.limits[1] = {"processes", 512, 512};
       },
       {"limits", Status::warn,
        "open files 1024, processes 512, locked memory unlimited; open files 1024 is below 4096 "
        "(each rank opens many files and sockets); processes 512 is below 4096 (data loader "
        "workers and threads count)",
        "ask the admins to raise the hard open files limit (2048); ask the admins to raise the "
        "hard processes limit (512)"}},
      {"locked memory without accelerators",
       [](Snapshot& s) {
         s.limits[2] = {"locked memory", 8 << 20, 8 << 20};
       },
       {"limits", Status::ok, "open files 65536, processes 16384, locked memory 8.0 MiB", ""}},
      {"locked memory on a GPU machine",
       [](Snapshot& s) {
         on_polaris(s);
         s.limits[2] = {"locked memory", 8 << 20, std::nullopt};
       },
       {"limits", Status::warn,
        "open files 65536, processes 16384, locked memory 8.0 MiB; locked memory 8.0 MiB is "
        "below unlimited (RDMA networks (InfiniBand, Slingshot) pin memory)",
        "ulimit -l unlimited in the job script"}},
      {"MASTER_PORT not a port",
       [](Snapshot& s) {
         s.env["MASTER_PORT"] = "http";
         s.port = {};
       },
       {"port", Status::error, "MASTER_PORT=http: expected a port number 1-65535",
        "unset MASTER_PORT: ezpz then picks a free port"}},
      {"MASTER_PORT free",
       [](Snapshot& s) {
         s.env["MASTER_PORT"] = "29500";
         s.port = {29500, ""};
       },
       {"port", Status::ok, "MASTER_PORT=29500 is free on this host", ""}},
      {"MASTER_PORT taken",
       [](Snapshot& s) {
         s.env["MASTER_PORT"] = "29500";
         s.port = {0, "Address already in use"};
       },
       {"port", Status::warn,
        "MASTER_PORT=29500 cannot be bound on this host: Address already in use",
        "unset MASTER_PORT (ezpz then picks a free port), or choose a free one"}},
      {"no port at all",
       [](Snapshot& s) {
         s.port = {0, "free port: socket: Address family not supported by protocol"};
       },
       {"port", Status::error,
        "no TCP port can be bound on this host: free port: socket: Address family not supported "
        "by protocol",
        "ranks meet on a TCP port of the first host: check its network set-up"}},
  });
}

TEST_CASE("doctor: the Python environment and where it lives", "[doctor]") {
  const std::string stage = "stage it to node-local storage first: ezpz yeet";
  check_rows({
      {"venv on Lustre, 2 hosts",
       [](Snapshot& s) { with_venv(s, 0x0BD00BD0); },
       {"python", Status::warn,
        "VIRTUAL_ENV /p/venv is on Lustre (shared): 2 hosts will import from it at once", stage}},
      {"venv on GPFS, 2 hosts",
       [](Snapshot& s) { with_venv(s, 0x47504653); },
       {"python", Status::warn,
        "VIRTUAL_ENV /p/venv is on GPFS (shared): 2 hosts will import from it at once", stage}},
      {"venv on NFS, one host",
       [](Snapshot& s) {
         run_local(s);
         with_venv(s, 0x6969);
       },
       {"python", Status::ok, "VIRTUAL_ENV /p/venv is on NFS (shared; fine for one host)", ""}},
      {"venv on ext4",
       [](Snapshot& s) { with_venv(s, 0xEF53); },
       {"python", Status::ok, "VIRTUAL_ENV /p/venv is on ext4 (node-local)", ""}},
      {"conda on an unknown filesystem",
       [](Snapshot& s) {
         s.env["CONDA_PREFIX"] = "/opt/conda";
         s.python.prefix = "/opt/conda";
         s.python.filesystem_magic = 0x1234;
       },
       {"python", Status::ok,
        "CONDA_PREFIX /opt/conda is on a filesystem ezpz does not know (type 0x1234)", ""}},
      {"venv deleted",
       [](Snapshot& s) {
         with_venv(s, 0);
         s.python.error = "/p/venv: No such file or directory";
       },
       {"python", Status::error, "VIRTUAL_ENV is set, but /p/venv: No such file or directory",
        "activate an environment that exists (source ENV/bin/activate)"}},
      {"no python at all",
       [](Snapshot& s) { s.python.python3.clear(); },
       {"python", Status::warn, "no venv or conda environment is active, and no python3 is on PATH",
        "activate the environment your job uses before ezpz launch"}},
  });
}

TEST_CASE("doctor: the ranks' python3 imports torch; its backends and mpi4py", "[doctor]") {
  const std::string debian = "/usr/bin/python3: Python 3.11.2, torch 1.13.0a0+git74dd6e3";
  const std::string by_hand = "run /usr/bin/python3 -c 'import torch' by hand";
  const std::string mpich = R"(, "mpi4py": "3.1.4", "mpi": "MPICH Version:\t4.0.2\nMPICH )"
                            R"(Release date:\tThu Apr  7 12:34:45 CDT 2022\n")";
  check_rows({
      {"no python3 on PATH",
       [](Snapshot& s) {
         s.python.python3.clear();
         s.python.imports = {};
       },
       {"torch", Status::warn, "no python3 on PATH: ranks that run python3 will not start",
        "activate the environment that has torch (or load its module) before ezpz launch"}},
      // Before: a pyenv Python printed this on every rank, and doctor said ok.
      {"ezpz's stack hook fails on this Python",
       [](Snapshot& s) {
         s.python_hook = "/opt/ezpz/libexec/ezpz/python";
         s.python.imports.err =
             "Error in sitecustomize; set PYTHONVERBOSE for traceback:\nKeyError: "
             "'sitecustomize'\n";
       },
       {"torch", Status::warn,
        debian + "; backends gloo, mpi; ezpz's Python stack hook "
                 "(/opt/ezpz/libexec/ezpz/python/sitecustomize.py) "
                 "fails on every rank: KeyError: 'sitecustomize'",
        "launch with --no-python-hook (and tell ezpz's maintainers which Python this is)"}},
      {"a venv without torch",
       [](Snapshot& s) {
         s.env["VIRTUAL_ENV"] = "/p/venv";
         s.python.python3 = "/p/venv/bin/python3";
         s.python.imports = imports("/p/venv/bin/python3",
                                    R"(, "error": "ModuleNotFoundError: No module named 'torch'")");
       },
       {"torch", Status::warn,
        "/p/venv/bin/python3: Python 3.11.2; cannot import torch: ModuleNotFoundError: No "
        "module named 'torch'",
        "pip install torch into this Python, or activate the environment that has torch before "
        "ezpz launch"}},
      {"a torch that cannot load its libraries: the first line",
       [](Snapshot& s) {
         s.python.imports =
             imports("/usr/bin/python3", R"(, "error": "ImportError: libcudart.so.12: cannot open )"
                                         R"(shared object file\nsecond line")");
       },
       {"torch", Status::warn,
        "/usr/bin/python3: Python 3.11.2; cannot import torch: ImportError: libcudart.so.12: "
        "cannot open shared object file",
        "run /usr/bin/python3 -c 'import torch' to see the whole error"}},
      {"torch without torch.distributed",
       [](Snapshot& s) {
         s.python.imports = imports("/usr/bin/python3", R"(, "torch": "2.1.0", "distributed": )"
                                                        R"(false, "backends": [])");
       },
       {"torch", Status::warn,
        "/usr/bin/python3: Python 3.11.2, torch 2.1.0; torch.distributed is not available in "
        "this build",
        "install a torch built with distributed support (pytorch.org's Linux builds are)"}},
      {"torch.distributed without a backend",
       [](Snapshot& s) {
         s.python.imports = imports("/usr/bin/python3", R"(, "torch": "2.1.0", "distributed": )"
                                                        R"(true, "backends": [])");
       },
       {"torch", Status::ok, "/usr/bin/python3: Python 3.11.2, torch 2.1.0; backends none", ""}},
      {"the profile's backend is missing",
       on_polaris,
       {"torch", Status::warn,
        debian + "; backends gloo, mpi; profile polaris uses backend nccl, "
                 "which this torch lacks",
        "activate the environment with this machine's torch build (with nccl), or load its "
        "module"}},
      {"the profile's backend is there",
       [](Snapshot& s) {
         on_polaris(s);
         s.python.imports = imports("/usr/bin/python3", R"(, "torch": "2.1.0", "distributed": )"
                                                        R"(true, "backends": ["gloo", "nccl"])");
       },
       {"torch", Status::ok, "/usr/bin/python3: Python 3.11.2, torch 2.1.0; backends gloo, nccl",
        ""}},
      {"xccl provided by Intel's oneCCL bindings",
       [](Snapshot& s) {
         s.profile_files.push_back({"/m/aurora.yaml",
                                    "match:\n  hostnames: [\"x*\"]\nscheduler: pbs\nlauncher: "
                                    "pals\ndevice: xpu\nbackend: xccl\n"});
         s.python.imports = imports("/usr/bin/python3", R"(, "torch": "2.3.1", "distributed": )"
                                                        R"(true, "backends": ["gloo", "ccl"])");
       },
       {"torch", Status::ok, "/usr/bin/python3: Python 3.11.2, torch 2.3.1; backends gloo, ccl",
        ""}},
      {"mpi4py built against MPICH, launched by Hydra",
       [&](Snapshot& s) {
         s.python.imports = imports("/usr/bin/python3", R"(, "torch": "2.1.0", "distributed": )"
                                                        R"(true, "backends": ["gloo"])" +
                                                            mpich);
       },
       {"torch", Status::ok,
        "/usr/bin/python3: Python 3.11.2, torch 2.1.0; backends gloo; mpi4py 3.1.4 (MPICH "
        "Version: 4.0.2)",
        ""}},
      {"mpi4py built against Open MPI, launched by Hydra",
       [](Snapshot& s) {
         s.python.imports = imports(
             "/usr/bin/python3",
             R"(, "error": "ModuleNotFoundError: No module named 'torch'", "mpi4py": "3.1.4", )"
             R"("mpi": "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4\n")");
       },
       {"torch", Status::warn,
        "/usr/bin/python3: Python 3.11.2; mpi4py 3.1.4 (Open MPI v4.1.4); cannot import torch: "
        "ModuleNotFoundError: No module named 'torch'; mpi4py uses Open MPI, but the hydra "
        "launcher does not start Open MPI programs (each rank would be alone)",
        "pip install torch into this Python, or activate the environment that has torch before "
        "ezpz launch; pass --launcher openmpi, or rebuild mpi4py against the launcher's MPI (pip "
        "install --no-binary mpi4py mpi4py)"}},
      {"mpi4py built against Open MPI, launched by srun: not judged",
       [](Snapshot& s) {
         s.launcher_flag = "srun";
         s.python.imports = imports("/usr/bin/python3", R"(, "mpi4py": "3.1.4", "mpi": "Open )"
                                                        R"(MPI v4.1.4", "torch": "2.1.0", )"
                                                        R"("distributed": true, "backends": [])");
       },
       {"torch", Status::ok,
        "/usr/bin/python3: Python 3.11.2, torch 2.1.0; backends none; mpi4py 3.1.4 (Open MPI "
        "v4.1.4)",
        ""}},
      {"mpi4py whose MPI does not load",
       [](Snapshot& s) {
         s.python.imports =
             imports("/usr/bin/python3", R"(, "torch": "2.1.0", "distributed": true, )"
                                         R"("backends": ["gloo"], "mpi4py": "3.1.4",)"
                                         R"( "mpi_error": "RuntimeError: cannot )"
                                         R"(load MPI library")");
       },
       {"torch", Status::warn,
        "/usr/bin/python3: Python 3.11.2, torch 2.1.0; backends gloo; mpi4py 3.1.4; mpi4py "
        "cannot load its MPI: RuntimeError: cannot load MPI library",
        "load the MPI module mpi4py was built against, or reinstall it: pip install "
        "--no-binary mpi4py mpi4py"}},
      {"a venv is active, but PATH's python3 is another",
       [](Snapshot& s) { with_venv(s, 0xEF53); },
       {"torch", Status::warn,
        debian + "; backends gloo, mpi; VIRTUAL_ENV is /p/venv, but the ranks run this "
                 "python3, first on PATH",
        "put /p/venv/bin first on PATH (source /p/venv/bin/activate)"}},
      {"the active conda env's python3 (CONDA_PREFIX with a trailing slash)",
       [](Snapshot& s) {
         s.env["CONDA_PREFIX"] = "/opt/conda/";
         s.python.python3 = "/opt/conda/bin/python3";
         s.python.imports =
             imports("/opt/conda/bin/python3",
                     R"(, "torch": "2.1.0", "distributed": true, "backends": ["nccl"])");
       },
       {"torch", Status::ok, "/opt/conda/bin/python3: Python 3.11.2, torch 2.1.0; backends nccl",
        ""}},
      {"warnings before the JSON line",
       [](Snapshot& s) {
         s.python.imports.out = "{'not': 'it'}\nUserWarning: x\n" + s.python.imports.out;
       },
       {"torch", Status::ok, debian + "; backends gloo, mpi", ""}},
      {"the import hangs",
       [](Snapshot& s) {
         s.python.imports = {};
         s.python.imports.timed_out = true;
         s.python.imports.timeout_s = 20;
       },
       {"torch", Status::warn, "/usr/bin/python3 importing torch: did not finish within 20 s",
        "a slow import delays every rank: stage the environment to node-local storage (ezpz "
        "yeet)"}},
      {"python3 crashes",
       [](Snapshot& s) {
         s.python.imports = {};
         s.python.imports.signal = 11;
       },
       {"torch", Status::warn, "/usr/bin/python3 importing torch: died of signal 11", by_hand}},
      {"python3 cannot start",
       [](Snapshot& s) {
         s.python.imports = {};
         s.python.imports.start_error = "/usr/bin/python3: Permission denied";
       },
       {"torch", Status::warn,
        "/usr/bin/python3 importing torch: could not start: /usr/bin/python3: Permission denied",
        by_hand}},
      {"python3 that is not Python",
       [](Snapshot& s) { s.python.imports = exited("/usr/bin/python3", 0, "hello\n"); },
       {"torch", Status::warn, "/usr/bin/python3 importing torch: printed no probe JSON: \"hello\"",
        by_hand}},
      {"a JSON line of the wrong shape",
       [](Snapshot& s) {
         s.python.imports = exited("/usr/bin/python3", 0, R"({"python": 3, "torch": ["x"]})");
       },
       {"torch", Status::warn,
        R"(/usr/bin/python3 importing torch: printed no probe JSON: "{"python": 3, "torch": ["x"]}")",
        by_hand}},
  });
}

TEST_CASE("doctor: a module system with nothing to load is a trap", "[doctor]") {
  const std::string trap =
      "MODULEPATH is empty: module load finds nothing, and the job runs whatever python3 is "
      "left on PATH";
  const std::string init =
      "start the job script with #!/bin/bash -l, or source the module system's init script "
      "($MODULESHOME/init/bash), before module load";
  check_rows({
      {"Lmod, MODULEPATH empty",
       [](Snapshot& s) {
         s.env["LMOD_CMD"] = "/usr/share/lmod/lmod/libexec/lmod";
         s.env["MODULESHOME"] = "/usr/share/lmod/lmod";
         s.env["MODULEPATH"] = "";
       },
       {"modules", Status::warn, "Lmod (LMOD_CMD is set), but " + trap, init}},
      {"an exported module function, MODULEPATH unset",
       [](Snapshot& s) { s.env["BASH_FUNC_module%%"] = "() {  eval $($LMOD_CMD bash \"$@\")\n}"; },
       {"modules", Status::warn, "a module shell function (BASH_FUNC_module%% is set), but " + trap,
        init}},
      {"MODULEPATH of separators only",
       [](Snapshot& s) {
         s.env["MODULESHOME"] = "/usr/share/modules";
         s.env["MODULEPATH"] = "::";
       },
       {"modules", Status::warn, "Environment Modules (MODULESHOME is set), but " + trap, init}},
      {"Environment Modules with modules loaded",
       [](Snapshot& s) {
         s.env["MODULESHOME"] = "/usr/share/modules";
         s.env["MODULEPATH"] = "/etc/modulefiles::/usr/share/modulefiles";
         s.env["LOADEDMODULES"] = "gcc/12:openmpi/4.1";
       },
       {"modules", Status::ok,
        "Environment Modules (MODULESHOME is set); MODULEPATH has 2 directories; loaded: "
        "gcc/12, openmpi/4.1",
        ""}},
      {"Lmod, nothing loaded",
       [](Snapshot& s) {
         s.env["LMOD_DIR"] = "/usr/share/lmod/lmod/libexec";
         s.env["MODULEPATH"] = "/opt/modulefiles";
       },
       {"modules", Status::ok, "Lmod (LMOD_DIR is set); MODULEPATH has 1 directory; loaded: none",
        ""}},
  });
}

TEST_CASE("doctor: tracking credentials are named, never shown", "[doctor]") {
  check_rows({
      {"API key",
       [](Snapshot& s) { s.env["WANDB_API_KEY"] = "s3cr3t-value"; },
       {"tracking", Status::ok, "W&B: WANDB_API_KEY is set (value not shown)", ""}},
      {"offline",
       [](Snapshot& s) { s.env["WANDB_MODE"] = "offline"; },
       {"tracking", Status::ok, "W&B is off (WANDB_MODE=offline)", ""}},
      {"a mode that is not off is not shown",
       [](Snapshot& s) { s.env["WANDB_MODE"] = "s3cr3t-mode"; },
       {"tracking", Status::ok,
        "W&B: no credentials (WANDB_API_KEY, ~/.netrc); runs that log to W&B need wandb login",
        ""}},
      {"netrc",
       [](Snapshot& s) { s.netrc_has_wandb = true; },
       {"tracking", Status::ok, "W&B: ~/.netrc has an api.wandb.ai login", ""}},
      {"a project but no key",
       [](Snapshot& s) { s.env["WANDB_PROJECT"] = "p"; },
       {"tracking", Status::warn,
        "W&B: WANDB_PROJECT is set, but there are no credentials (WANDB_API_KEY, ~/.netrc)",
        "run wandb login, export WANDB_API_KEY, or set WANDB_MODE=offline"}},
      {"other trackers",
       [](Snapshot& s) {
         s.env["WANDB_API_KEY"] = "s3cr3t-value";
         s.env["HF_TOKEN"] = "s3cr3t-hf";
         s.env["MLFLOW_TRACKING_URI"] = "https://s3cr3t@mlflow";
       },
       {"tracking", Status::ok,
        "W&B: WANDB_API_KEY is set (value not shown); also set: MLFLOW_TRACKING_URI, HF_TOKEN",
        ""}},
  });
}

TEST_CASE("doctor: an exception inside a check is that check's error; the others still run",
          "[doctor]") {
  Snapshot s = healthy();
  s.trainer_probe.out = R"({"libtorch":"x","devices":{"cpu":"one"},"backends":[]})";
  s.scheduler.reset();
  s.scheduler_error = "EZPZ_SCHEDULER: unknown scheduler \"x\"; expected pbs, slurm, flux or local";
  std::vector<CheckResult> results = run_checks(s);
  std::vector<std::string> names;
  for (const CheckResult& r : results) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"scheduler", "allocation", "profile", "launcher", "gpus",
                                          "libraries", "trainer", "storage", "limits", "port",
                                          "python", "torch", "modules", "tracking", "stacks"});
  CHECK(results[6] == CheckResult{"trainer", Status::error,
                                  "the check itself failed: [json.exception.type_error.302] type "
                                  "must be number, but is string",
                                  "report this as an ezpz bug, with the output of ezpz doctor -v"});
  CHECK(results[0].status == Status::error);
  CHECK(results[13].status == Status::ok);
  CHECK(worst(results) == Status::error);
}

TEST_CASE("doctor: helpers the probes use", "[doctor]") {
  CHECK(netrc_has_machine("machine api.wandb.ai\n  login user\n  password p\n", "api.wandb.ai"));
  CHECK(netrc_has_machine("default login x machine\tapi.wandb.ai password y", "api.wandb.ai"));
  CHECK_FALSE(netrc_has_machine("machine github.com login api.wandb.ai", "api.wandb.ai"));
  CHECK_FALSE(netrc_has_machine("", "api.wandb.ai"));
  CHECK(launcher_program("pals") == "mpiexec");
  CHECK(launcher_program("hydra") == "mpiexec");
  CHECK(launcher_program("openmpi") == "mpirun");
  CHECK(launcher_program("srun") == "srun");
  CHECK(launcher_program("torchrun") == "torchrun");
  YeetTarget none = yeet_target({});
  CHECK(none.source.empty());
  CHECK(none.destination.empty());
  CHECK(none.directory == "/tmp");
  YeetTarget venv = yeet_target({{"VIRTUAL_ENV", "/p/venv/"}, {"CONDA_PREFIX", "/opt/c"}});
  CHECK(venv.source == "/p/venv/");
  CHECK(venv.destination == "/tmp/venv");
  CHECK(venv.directory == "/tmp");
  CHECK(to_string(Status::ok) == "ok");
  CHECK(to_string(Status::warn) == "warn");
  CHECK(to_string(Status::error) == "error");
  CHECK(worst({}) == Status::ok);
}

TEST_CASE("doctor: stacks of hung ranks need eu-stack or gdb for native ranks", "[doctor]") {
  check_rows({
      {"neither eu-stack nor gdb",
       [](Snapshot& s) { s.native_stack_tool.reset(); },
       {"stacks", Status::warn,
        "neither eu-stack nor gdb on PATH: hung native ranks get no stacks (Python ranks still "
        "do)",
        "install elfutils (eu-stack, the faster) or gdb (Debian: apt-get install elfutils)"}},
  });
}
