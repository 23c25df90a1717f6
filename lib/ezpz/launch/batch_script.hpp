#pragma once
// `ezpz submit`'s batch script: PBS or Slurm directives, then `ezpz launch`
// with the user's command. Pure: values in, text out; lib/ezpz/sys and
// apps/ezpz/cmd_submit.cpp write the file and run qsub/sbatch.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/env.hpp"

namespace ezpz {

// The Python environment active where `ezpz submit` runs, activated again in
// the job (qsub passes the job none of the submitting shell's variables).
struct CarriedEnv {
  std::optional<std::string> conda_prefix;  // CONDA_PREFIX: the active conda env
  std::optional<std::string> conda_name;    // CONDA_DEFAULT_ENV, named in the comment
  std::optional<std::string> conda_exe;     // CONDA_EXE: its shell hook defines `conda activate`
  std::optional<std::string> venv;          // VIRTUAL_ENV: activated after conda, so it comes first
  std::optional<std::string> modules;       // LOADEDMODULES: named, not loaded again
  // EZPZ_SETUP_ENV: a file the job sources first, as the Python ezpz's jobs do (modules ...).
  std::optional<std::string> setup_file;
};

// What `env` says is active. Throws Error when a path holds a newline or
// another control character: it could not be shown in the script's comments.
CarriedEnv carried_environment(const Env& env);

// The account when -A is not given, as the Python ezpz takes it: PBS_ACCOUNT (PBS) or
// SLURM_ACCOUNT (Slurm), else PROJECT; with the variable's name, for the script's comment.
struct EnvAccount {
  std::string account;
  std::string variable;
};
std::optional<EnvAccount> account_from_env(const Env& env, SchedulerKind scheduler);

// What the job asks the scheduler for, and what it runs.
struct BatchRequest {
  SchedulerKind scheduler = SchedulerKind::pbs;  // pbs or slurm
  std::string scheduler_rule;                    // why this scheduler, for the script's comment
  long nodes = 1;
  std::optional<std::string> walltime;     // as given to --time: see parse_walltime
  std::optional<std::string> queue;        // PBS queue, Slurm partition
  std::optional<std::string> account;      // PBS -A, Slurm -A
  std::string account_source;              // the variable it came from; empty: -A/--account
  std::string job_name;                    // PBS -N, Slurm -J
  std::optional<std::string> filesystems;  // PBS -l filesystems= (PBS only)
  std::optional<std::string> output;       // the job's stdout and stderr
  // Written verbatim after the prefix (#PBS, #SBATCH), after ezpz's own:
  // what a machine profile requires beyond the options above.
  std::vector<std::string> extra_directives;
  CarriedEnv environment;                // activated before ezpz launch
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
  std::string rule;                         // which input decided, for -v and the script
  bool from_path = false;  // only a qsub or sbatch on PATH decided: a guess, said on stderr
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

// The seconds a --time value asks for. The forms are sbatch's (its --time):
// M, M:SS, H:MM:SS, D-H, D-H:MM, D-H:MM:SS; qsub's walltime,
// [[hours:]minutes:]seconds, reads M:SS and H:MM:SS alike, and a bare number
// is minutes here, as sbatch reads it (qsub would read seconds). Fields after
// the first stay below 60 (hours after days below 24). Throws Error, one
// line, for anything else or for zero.
long parse_walltime(std::string_view text);

// The walltime as the scheduler's directive takes it: PBS's HH:MM:SS (hours
// past 24, it has no days), Slurm's D-HH:MM:SS from a day on.
std::string format_walltime(long seconds, SchedulerKind scheduler);

// The job name when none is given: what the command runs (`python3 train.py`
// -> train, `python3 -m pkg.mod` -> pkg.mod, `ezpz test` -> ezpz-test), made
// fit for the scheduler's name rules (see the rows in batch_script.cpp).
std::string default_job_name(const std::vector<std::string>& command, SchedulerKind scheduler);

// The nodes to request: --nodes when given; else, with -n and a known number
// of ranks per node (--ppn, else the profile's `gpus_per_node`), as many as
// `ezpz launch` in the job will fill; else 1. Throws the launch's own error
// when the ranks do not fit the nodes.
struct NodeRequest {
  std::optional<long> nodes{};   // -N/--nodes
  std::optional<long> nprocs{};  // -n/--np
  std::optional<long> ppn{};     // --ppn
  int gpus_per_node = 0;         // the profile's; 0 = unknown
  std::string profile_name{};
};
long nodes_to_request(const NodeRequest& request);

// One warning per value the profile's `batch.required` names that is missing
// ("account", "walltime", "queue"), naming the option that gives it.
std::vector<std::string> missing_requirements(const BatchRequest& request,
                                              const std::vector<std::string>& required,
                                              std::string_view profile_name);

// The script. Throws Error naming the option whose value cannot go in a
// directive, or --filesystems under Slurm.
std::string render_batch_script(const BatchRequest& request);

// The job id in what qsub/sbatch printed: sbatch's "Submitted batch job N"
// gives N; anything else (qsub's "123.server") is taken whole, trimmed.
std::string job_id_from_output(std::string_view output);

}  // namespace ezpz
