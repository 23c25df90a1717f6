#pragma once
// `ezpz doctor`: what would break a job, judged before it is submitted. The
// probes in lib/ezpz/sys/doctor_probes.cpp gather a Snapshot (plain values);
// the checks here turn it into one CheckResult each. Pure: no environment,
// no files, no processes, so every check is tested from fabricated snapshots.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/env.hpp"
#include "ezpz/profile/machine_profile.hpp"

namespace ezpz::doctor {

enum class Status { ok, warn, error };
std::string_view to_string(Status status);  // "ok", "warn", "error"

struct CheckResult {
  std::string name;  // "scheduler", "allocation", ...
  Status status = Status::ok;
  std::string message;  // one line
  std::string remedy;   // one line; empty when there is nothing to do
  bool operator==(const CheckResult&) const = default;
};

// ---- The snapshot: what the probes saw ------------------------------------

// A helper program run to completion, or stopped at its deadline.
struct ProgramRun {
  std::string path;         // what ran
  std::string start_error;  // why it could not start; empty when it ran
  bool timed_out = false;
  double timeout_s = 0;
  std::optional<int> exit_code;  // set when it exited on its own
  int signal = 0;                // set when a signal ended it
  std::string out;               // stdout
  std::string err;               // stderr
};

// getaddrinfo() for one host of the allocation.
struct HostLookup {
  std::string host;
  enum class Result { resolved, failed, timed_out } result = Result::resolved;
  std::string detail;  // the first address, or gai_strerror()
};

// Node-local storage for `ezpz yeet`: the default destination's directory,
// and the size of the environment that would be staged there.
struct StorageProbe {
  std::string source;       // VIRTUAL_ENV or CONDA_PREFIX; empty when none is active
  std::string destination;  // yeet's default destination for it
  std::string directory;    // the directory the destination is created in
  std::string error;        // statvfs() of `directory` failed: "<dir>: <reason>"
  bool writable = false;
  std::uint64_t free_bytes = 0;
  std::uint64_t source_bytes = 0;  // what the walk counted
  std::uint64_t source_files = 0;
  bool walk_capped = false;  // stopped at its time limit: source_bytes is a lower bound
  double walk_limit_s = 0;
  std::string walk_error;  // the source could not be read
};

// One resource limit; nullopt is unlimited.
struct Limit {
  std::string name;  // "open files", "locked memory", "processes"
  std::optional<std::uint64_t> soft;
  std::optional<std::uint64_t> hard;
};

// A TCP port this host can bind: MASTER_PORT when set, else any free one.
struct PortProbe {
  int port = 0;       // the port bound (0 when none could be)
  std::string error;  // bind() failed: "<reason>"
};

// The active Python environment, the filesystem it lives on, and what the
// python3 the ranks would run can import (python_probe_argv).
struct PythonProbe {
  std::string python3;                // python3 on PATH; empty when none
  std::string prefix;                 // VIRTUAL_ENV or CONDA_PREFIX; empty when none is active
  std::string error;                  // statfs() of prefix failed: "<prefix>: <reason>"
  std::int64_t filesystem_magic = 0;  // statfs f_type
  ProgramRun imports;                 // python_probe_argv(python3); not run without python3
};

// Whether the program the launcher starts from its own directory (LauncherRow::started_beside)
// is there.
struct Companion {
  std::string name;              // "hydra_pmi_proxy"
  bool beside = true;            // in the launcher path's own directory
  bool link = false;             // the launcher path is a symbolic link (not a wrapper script)
  std::string resolved;          // the launcher path with its links resolved
  bool beside_resolved = false;  // in that path's directory
};

struct Snapshot {
  Env env;
  // The directory launch puts first on the ranks' PYTHONPATH (its stack hook); the python3
  // probe runs with it there too. Empty: none.
  std::string python_hook;
  std::string hostname;
  std::string user;
  std::string ezpz_version;  // "0.1.0 (abc123)"
  // What the command line asked for (--scheduler and --hostfile are already
  // in the scheduler and allocation below).
  std::optional<std::string> machine_flag;
  std::optional<std::string> launcher_flag;
  std::optional<std::string> launcher_program_flag;  // --launcher-program
  bool root = false;  // ezpz runs as root (effective uid 0): Open MPI refuses to, unless told
  // The scheduler and allocation as `ezpz launch` reads them (schedulers/);
  // the *_error fields say why one could not be had.
  std::optional<SchedulerKind> scheduler;
  std::string scheduler_rule;  // "PBS_JOBID is set", "--scheduler local", ...
  std::string scheduler_error;
  std::optional<Allocation> allocation;
  std::string allocation_error;
  // Where the hosts came from ("PBS_NODEFILE /var/spool/pbs/aux/1.pbs", "SLURM_JOB_NODELIST",
  // "--hostfile h", "this host") and its lines with repeats (empty for a nodelist).
  std::string hosts_source;
  std::vector<std::string> listed_hosts;
  // The scheduler's nodefile could not be read: "PBS_NODEFILE: <path>: <why>".
  std::string hosts_error;
  // Machine profile files on the search path; `profiles_error` when they could not be listed.
  std::vector<ProfileFile> profile_files;
  std::string profiles_error;
  // The launcher the plan would use: its program name and `--version`.
  std::string launcher_program;
  std::optional<std::string> launcher_path;  // on PATH; nullopt when not found
  ProgramRun launcher_version;               // not run when the launcher has no --version
  // Its companion, for a launcher that has one (Hydra's hydra_pmi_proxy) and was found.
  std::optional<Companion> companion;
  ProgramRun torchrun_trial;  // torchrun_trial_argv(), run only when the launcher is torchrun
  // The GPUs a vendor tool lists on this node (nvidia-smi, rocm-smi, xpu-smi: the probe
  // `ezpz launch` runs); nullopt when none answered.
  std::optional<int> accelerators;
  // Each library the profile names (MachineProfile::libraries) and the LD_LIBRARY_PATH
  // directory that holds it; "" where none does.
  EnvList libraries_found;
  // `ezpz-smoke --probe`; `trainer_error` says why there is none to run.
  std::optional<std::string> trainer_path;
  std::string trainer_error;
  ProgramRun trainer_probe;
  std::vector<HostLookup> lookups;
  double lookup_timeout_s = 0;
  StorageProbe storage;
  std::vector<Limit> limits;
  // gdb, which takes hung native ranks' stacks (ezpz stacks, --idle-timeout); nullopt: not on PATH.
  std::optional<std::string> native_stack_tool;
  PortProbe port;
  PythonProbe python;
  bool netrc_has_wandb = false;  // ~/.netrc has a `machine api.wandb.ai` entry
};

// ---- What the checks derive from it (shared by several checks) -------------

struct Derived {
  std::vector<MachineProfile> profiles;     // those that loaded
  std::vector<std::string> profile_errors;  // "<file>:<line>: <what>", one per broken file
  std::optional<MachineProfile> profile;    // the one that applies
  std::string profile_rule;
  std::string profile_error;
  std::string launcher;  // the dialect the plan would use; empty when no profile applies
};

// The machine profile and launcher dialect, as `ezpz launch` would decide them
// from the same inputs. Never throws: failures are in the *_error fields.
Derived derive(const Snapshot& snapshot);

// Where `ezpz yeet` stages the active environment by default (yeet.hpp's rule),
// and the directory that destination is made in; with no active environment,
// the directory it would use for one.
struct YeetTarget {
  std::string source;       // VIRTUAL_ENV or CONDA_PREFIX; empty when none is active
  std::string destination;  // empty when there is no source
  std::string directory;
};
YeetTarget yeet_target(const Env& env);

// The program a dialect runs first ("mpiexec" for pals and hydra, "srun", ...).
std::string launcher_program(std::string_view dialect);

// What `python3` runs to report on torch, torch.distributed's backends and
// mpi4py: `python3 -c CODE`, printing one JSON line (see doctor_python.cpp).
std::vector<std::string> python_probe_argv(const std::string& python3);

// torchrun at `path` as `ezpz launch` starts it on one host, running one rank of `true`:
// whatever would stop a job's torchrun from starting stops this.
std::vector<std::string> torchrun_trial_argv(const std::string& path);

// Whether a `.netrc` text has a `machine <host>` entry (its password is never kept).
bool netrc_has_machine(std::string_view netrc_text, std::string_view host);

// ---- The checks ------------------------------------------------------------

// Every check, in report order. Each runs even when an earlier one failed; an
// exception inside one becomes an error result for that check.
std::vector<CheckResult> run_checks(const Snapshot& snapshot, const Derived& derived);
std::vector<CheckResult> run_checks(const Snapshot& snapshot);  // derives first

// The worst status of `results` (ok when empty).
Status worst(const std::vector<CheckResult>& results);

}  // namespace ezpz::doctor
