#pragma once
// `ezpz kill`: the pure part. Every process ezpz starts carries its run's id
// (EZPZ_RUN_ID, inherited by the launcher and every rank), so ezpz can find
// exactly its own processes and never a stranger that merely looks alike.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz::kill {

inline constexpr std::string_view k_run_id_variable = "EZPZ_RUN_ID";

// Seconds from the stop signal to SIGKILL, for `launch --grace` and `kill --grace`
// alike: ranks that trap SIGTERM to write a checkpoint get the same time either way.
inline constexpr int k_grace_seconds = 10;

// The value of `name` in a /proc/PID/environ block (NUL-separated NAME=VALUE).
std::optional<std::string> environ_value(std::string_view block, std::string_view name);

// The scheduler's job id, as schedulers/ reads it: a job's ranks inherit it, so
// `ezpz kill` inside a job can stop that job's runs and leave other jobs' alone
// (a login node is shared by every job of the user).
inline constexpr std::array<std::string_view, 3> k_job_id_variables = {"PBS_JOBID", "SLURM_JOB_ID",
                                                                       "SLURM_JOBID"};

// The first of k_job_id_variables set and non-empty in `lookup` (a name to its
// value, nullopt when unset); empty outside a job.
std::string job_id_of(const std::function<std::optional<std::string>(std::string_view)>& lookup);

// A process as /proc shows it.
struct Process {
  int pid = 0;
  std::string run_id;    // its EZPZ_RUN_ID; empty when it has none
  std::string command;   // its command line, words joined by spaces
  int parent = 0;        // its parent's pid
  std::string job_id{};  // its scheduler job (job_id_of its environment); empty outside one
};

// The processes to signal: tagged with `run_id` (any run when empty), never
// `self` and never one of our own run (a kill launched by ezpz is a run too).
std::vector<Process> select_targets(const std::vector<Process>& processes, std::string_view run_id,
                                    int self, std::string_view own_run_id);

// Those of `processes` that belong to scheduler job `job_id`.
std::vector<Process> of_job(const std::vector<Process>& processes, std::string_view job_id);

// One line per run among `processes`, in the order they first appear:
// "RUN (job JOB): N processes: COMMAND" (the first process's command; no job part
// outside a job). What `ezpz kill` without a run id lists.
std::vector<std::string> describe_runs(const std::vector<Process>& processes);

// The launches' own ezpz processes: the untagged parents of tagged processes
// whose command is ezpz (`parent_command(pid)` gives a parent's command line).
// Signalled first, they stop their runs the way Ctrl-C does (forwarded to the
// whole launch, then SIGKILL after the grace period) and exit 128+N, so a run
// stopped by `ezpz kill` never reports success.
std::vector<Process> controllers(const std::vector<Process>& targets,
                                 const std::function<std::string(int)>& parent_command, int self);

// "TERM", "SIGTERM", "15" -> 15; nullopt for anything else (signals kill sends by name: TERM,
// INT, KILL, HUP, QUIT, USR1, USR2, STOP, CONT, ABRT; any other by its number 1-64).
std::optional<int> parse_signal(std::string_view text);

// One report line per process: what was (or would be) done.
std::string describe(const Process& process, std::string_view action);

}  // namespace ezpz::kill
