#pragma once
// Schedulers as rows: how each is detected from the environment and how its
// allocation is read. Pure given an Env and a FileReader.
#include <optional>
#include <string>
#include <string_view>

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
