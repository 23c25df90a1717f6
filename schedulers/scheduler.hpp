#pragma once
// Schedulers as rows: how each is detected from the environment and how its
// allocation is read. Pure given an Env and a FileReader.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/env.hpp"
#include "ezpz/core/files.hpp"

namespace ezpz {

struct SchedulerChoice {
  SchedulerKind kind = SchedulerKind::local;
  std::string rule;  // which precedence step decided, for -v and doctor
};

// --scheduler > EZPZ_SCHEDULER > Flux (FLUX_URI) > PBS (PBS_JOBID) > Slurm (SLURM_JOB_ID or
// SLURM_JOBID with a nodelist) > local. Flux comes first because a Flux instance is started
// inside another scheduler's job (flux start under srun or in a PBS job), never the other way
// round: the innermost scheduler is the one whose launcher reaches the hosts. (Its broker
// also unsets SLURM_* for the programs it runs, but not PBS_*.) Throws Error for an unknown
// name.
SchedulerChoice choose_scheduler(const std::optional<std::string>& flag, const Env& env);

// The hosts and job id of the allocation. `hostname` is this host, used by
// the local scheduler; `commands` runs Flux's. Throws Error naming the variable, file or
// program at fault.
Allocation read_allocation(SchedulerKind kind, const Env& env, const FileReader& files,
                           const CommandReader& commands, std::string_view hostname);

// A running job and its hosts, as qstat or squeue lists it.
struct RunningJob {
  SchedulerKind kind = SchedulerKind::local;
  std::string job_id;
  std::vector<std::string> hosts;
};
struct JobLookup {
  std::optional<RunningJob> job;    // the first running job holding the host
  std::vector<std::string> asked;   // the programs that answered ("qstat", "squeue")
  std::vector<std::string> failed;  // those that could not: "squeue: it failed ..."
};

// The running job (of $USER, when set) that holds `host`: `qstat -n1 -w -r`, then
// `squeue -h -t R -o "%i %N"`, each asked only when `on_path` finds it. For a compute node
// reached by ssh, where the job's variables are gone, or one whose PBS_NODEFILE is another
// job's (schedulers/job_lookup.cpp). A client's failure for a moment (transient_lookup_failure)
// is asked again, 5 times in all, `pause(seconds)` between.
JobLookup find_job_holding(std::string_view host, const Env& env, const CommandReader& commands,
                           const std::function<bool(std::string_view)>& on_path,
                           const std::function<void(double)>& pause);
// Whether a client's failure is one of the moment: qstat's "Communication failure." and
// "cannot connect to server ...".
bool transient_lookup_failure(std::string_view words);

// Per-scheduler rows (schedulers/<name>.cpp).
struct SchedulerSpec {
  SchedulerKind kind;
  // A sentence naming the variables that revealed it, or nullopt. Must not
  // throw: a half-set environment is reported by read_allocation.
  std::optional<std::string> (*detect)(const Env&);
  Allocation (*read)(const Env&, const FileReader&, const CommandReader&,
                     std::string_view hostname);
};

extern const SchedulerSpec k_flux;
extern const SchedulerSpec k_pbs;
extern const SchedulerSpec k_slurm;
extern const SchedulerSpec k_local;

}  // namespace ezpz
