#pragma once
// When the job's walltime ends, asked of the scheduler once as a launch with --signal starts
// (lib/ezpz/supervise/walltime_warning.hpp reads the answers).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ezpz/core/env.hpp"

namespace ezpz::sys {

struct JobEnd {
  std::optional<std::int64_t> end;  // seconds since the epoch
  std::string why;                  // when `end` is unknown: why, in words
};

// Slurm: SLURM_JOB_END_TIME when set, else `squeue -h -j JOB -o %e`. PBS: `qstat -f JOB`'s
// stime plus Resource_List.walltime. Anything else: unknown.
JobEnd read_job_end(std::string_view scheduler, const std::string& job_id, const Env& env);

// Seconds since the epoch, now.
std::int64_t epoch_now();

}  // namespace ezpz::sys
