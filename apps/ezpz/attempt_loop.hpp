#pragma once
// `ezpz launch` as a supervised run: the supervision options (watchdogs, retries, spares, the
// run record), wired to the policy (lib/ezpz/supervise/attempt_loop.hpp), the process
// executor and this node's side effects (lib/ezpz/sys/run_effects.hpp).
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "ezpz/output/console.hpp"
#include "ezpz/output/record_floor.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/kill.hpp"
#include "plan_options.hpp"

namespace ezpz {

// The most of an attempt's output its output.log keeps: a rank in a loop
// (`yes`) fills a disk in minutes, and a record's use is the story of a run.
inline constexpr std::uint64_t k_default_record_limit = std::uint64_t{1} << 30;

// --kill-on-bad-exit's default: long enough for the other ranks to finish what they were doing
// when a rank fails as the job ends (a last checkpoint), far shorter than the hang that follows a
// rank's failure mid-job (NCCL's collectives wait 10 minutes; a rendezvous, its timeout).
inline constexpr double k_default_kill_on_bad_exit_s = 10;

struct AttemptOptions {
  double timeout_s = 0;       // --time-limit: wall clock per attempt; 0: none
  double idle_timeout_s = 0;  // --idle-timeout, --timeout: no output from any rank; 0: none
  std::string progress_pattern = std::string(k_default_progress);  // --progress-pattern
  // --kill-on-bad-exit: from a rank's failure to stopping the job, if it still runs; nullopt: off
  std::optional<double> kill_on_bad_exit_s = k_default_kill_on_bad_exit_s;
  double grace_s = kill::k_grace_seconds;  // --grace: SIGTERM to SIGKILL
  std::optional<int> retries; // --retries: further attempts after a node-side failure
  int spares = 0;             // --spares: hosts held back to replace bad ones
  double retry_delay_s = 5;   // --retry-delay: the first back-off, doubled each time (cap 60 s)
  bool no_record = false;     // --no-record: no run record
  bool no_python_hook = false;  // --no-python-hook: no stack hook on the ranks' PYTHONPATH
  std::optional<std::string> runs_dir;  // --runs-dir
  std::uint64_t record_limit = k_default_record_limit;  // --record-limit: output.log's cap
  // --record-floor, else EZPZ_RECORD_FLOOR, else the default: the free space the record leaves
  // the job on its filesystem
  std::optional<std::uint64_t> record_floor;
  std::string output;  // --output: a console mode's name; empty: the default for where it goes
  // The console mode once the plan is known; nullopt: the bytes pass as they come (raw, or
  // ranks not wrapped by ezpz-rankenv).
  std::optional<output::ConsoleMode> console;
  std::string signal;  // --signal SIG[@SECONDS]: a warning before the walltime ends; empty: none
};

// The directory of ezpz's Python stack hook (share/python's sitecustomize.py, beside ezpz or
// in libexec/ezpz), which launch puts first on the ranks' PYTHONPATH; empty when there is none.
std::string python_hook_dir(const Context& context);

// Declares the options above on `launch`.
void add_attempt_options(CLI::App& cmd, AttemptOptions& options);

// --output's mode, else EZPZ_OUTPUT's, else the default for where ezpz's stdout goes (a terminal
// or not). Not raw: the plan asks ezpz-rankenv for rank records (PlanOptions::output_records).
output::ConsoleMode console_mode(const AttemptOptions& options, const Env& env);
// The console mode the pump applies (AttemptOptions::console): `mode`, where the plan has the
// ranks write records (raw: pass their pipes); else nullopt, said once under -v (torchrun, Open
// MPI, --no-rank-env) unless raw.
std::optional<output::ConsoleMode> records_console(output::ConsoleMode mode,
                                                   const LaunchPlan& plan);

// How a run ended: ezpz's exit status, the last attempt's (124 when a limit stopped it, 143
// at walltime), and that attempt's ending and reason in words (run.json's).
struct RunEnd {
  int status = 0;
  std::string ending;
  std::string reason;
};

// Runs the prepared launch until it succeeds, fails for good, or runs out of attempts.
RunEnd run_attempts(const AttemptOptions& options, const PreparedLaunch& prepared,
                    const Context& context);

}  // namespace ezpz
