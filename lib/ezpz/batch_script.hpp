#pragma once
// `ezpz submit`'s batch script: PBS or Slurm directives, then `ezpz launch`
// with the user's command. Pure: values in, text out; lib/ezpz/sys and
// apps/ezpz/cmd_submit.cpp write the file and run qsub/sbatch.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/allocation.hpp"

namespace ezpz {

// What the job asks the scheduler for, and what it runs.
struct BatchRequest {
  SchedulerKind scheduler = SchedulerKind::pbs;  // pbs or slurm
  long nodes = 1;
  std::optional<std::string> walltime;     // HH:MM:SS
  std::optional<std::string> queue;        // PBS queue, Slurm partition
  std::optional<std::string> account;      // PBS -A, Slurm -A
  std::string job_name;                    // PBS -N, Slurm -J
  std::optional<std::string> filesystems;  // PBS -l filesystems= (PBS only)
  std::optional<std::string> output;       // the job's stdout and stderr
  // Written verbatim after the prefix (#PBS, #SBATCH), after ezpz's own:
  // what a machine profile requires beyond the options above.
  std::vector<std::string> extra_directives;
  std::string ezpz;                      // absolute path of the ezpz to run in the job
  std::vector<std::string> launch_args;  // given to `ezpz launch` before "--"
  std::vector<std::string> command;      // the user's command, never parsed
};

// What decides where `ezpz submit` sends the job, gathered by the caller.
struct SubmitSchedulerInputs {
  std::optional<std::string> flag;       // --scheduler
  std::optional<SchedulerKind> job;      // the environment's: inside a job, EZPZ_SCHEDULER
  std::string job_rule;                  //   and why ("PBS_JOBID is set")
  std::optional<SchedulerKind> profile;  // the machine profile's `scheduler`
  std::string profile_name;
  bool qsub_on_path = false;
  bool sbatch_on_path = false;
};

struct SubmitScheduler {
  SchedulerKind kind = SchedulerKind::pbs;  // pbs or slurm
  std::string rule;                         // which input decided, for -v
};

// --scheduler > the environment > the machine profile > qsub, then sbatch,
// on PATH; "local" counts as none. Throws Error for an unknown --scheduler
// or when nothing names a batch scheduler.
SubmitScheduler choose_submit_scheduler(const SubmitSchedulerInputs& inputs);

// The word in single quotes, each ' written '\'': a POSIX shell reads it back
// unchanged whatever it holds ($, `, ", \, newlines, *).
std::string single_quote(std::string_view word);

// What would stop `value` from sitting on one directive line as one word:
// "a newline", "a space", "a quote" ...; nullopt when it can. Raw directives
// (a profile's "-l place=scatter") may hold spaces: `allow_spaces`.
std::optional<std::string> directive_problem(std::string_view value, bool allow_spaces = false);

// Throws Error("--time: expected HH:MM:SS ...") unless `text` is hours
// (any number of digits), minutes and seconds (two digits each, below 60).
void check_walltime(std::string_view text);

// The job name when none is given: the command's file name, with characters a
// directive cannot hold replaced by '_' ("ezpz" for an empty one).
std::string default_job_name(const std::vector<std::string>& command);

// The script. Throws Error naming the option whose value cannot go in a
// directive, or --filesystems under Slurm.
std::string render_batch_script(const BatchRequest& request);

// The job id in what qsub/sbatch printed: sbatch's "Submitted batch job N"
// gives N; anything else (qsub's "123.server") is taken whole, trimmed.
std::string job_id_from_output(std::string_view output);

}  // namespace ezpz
