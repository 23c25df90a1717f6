#pragma once
// The process executor: runs a LaunchPlan as processes (the Executor of supervise/executor.hpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ezpz/core/env.hpp"
#include "ezpz/launch/plan.hpp"
#include "ezpz/output/console.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/executor.hpp"
#include "ezpz/supervise/kill.hpp"
#include "ezpz/supervise/walltime_warning.hpp"

namespace ezpz::sys {

struct ProcessOptions {
  // How long after a forwarded SIGINT/SIGTERM/SIGHUP the launcher's process
  // group gets SIGKILL if it is still alive; a second SIGINT escalates at once.
  std::chrono::milliseconds grace{std::chrono::seconds(kill::k_grace_seconds)};
  // A launcher still running this long after it started is stopped as if ezpz
  // had been sent SIGTERM (then SIGKILL after `grace`); zero: no limit.
  std::chrono::milliseconds timeout{0};
  // The launcher's stdout goes to this file (created or truncated, mode 0600)
  // instead of ezpz's own; empty: inherited. Not with capture_output.
  std::string stdout_path{};
  // The launcher's stdout and stderr pass through ezpz on their way to ezpz's
  // own (still live), which is what makes the three options below possible.
  bool capture_output = false;
  // With capture: both streams, in arrival order, also go to this file (0600),
  // up to this many bytes (0: no limit).
  std::string output_record_path{};
  std::uint64_t output_record_limit = 0;
  // With capture: the free space the record leaves on its filesystem (0: none).
  std::uint64_t output_record_floor = 0;
  // With capture: no output from the launcher for this long stops it as
  // `timeout` does; zero: no limit.
  std::chrono::milliseconds idle_timeout{0};
  // With capture: shown each line of the launcher's stderr; returning true stops the launcher
  // as the limits do (Watchdog::signature): a line naming a failed node ends the attempt now
  // rather than after the hang that usually follows.
  std::function<bool(std::string_view line)> stop_on_stderr_line{};
  // With capture: a rank's failure that ezpz-rankenv reports (rank_env.hpp's exit_report) stops
  // the launcher this long after, if it still runs (Watchdog::rank_failed), as srun
  // --kill-on-bad-exit, torchrun and Open MPI's mpirun end a job: MPICH's Hydra waits on for
  // the other ranks, which hang in their next collective. nullopt: never.
  std::optional<std::chrono::milliseconds> stop_after_rank_failure{};
  // With capture: the ranks write rank records (issue 18), shown in this console mode; raw:
  // the ranks on this host pass ezpz their pipes (OutputPump); nullopt: the bytes pass as they
  // come.
  std::optional<output::ConsoleMode> console{};
  // Takes the ranks' stacks (`ezpz stacks`), given output_record_path: when
  // --idle-timeout fires, before the launcher is stopped, and on SIGQUIT, which is then not
  // forwarded (a Python rank would die of it). Empty: SIGQUIT is forwarded as the others are.
  std::function<void(const std::string& output_record_path)> take_stacks{};
  // With capture: how much of the output's end the outcome keeps.
  std::size_t tail_bytes = 256 * 1024;
  // The launcher's own processes on this node (launcher_table.hpp's `parts`): one dead of a
  // signal stops the launcher, as its own death would (Hydra waits on forever for it).
  std::vector<std::string> launcher_parts{};
  // --signal: this signal goes to the launcher at this time (sys/walltime_warner.hpp), or to
  // signal_ranks (a step on each node signalling its ranks; true when it reached them).
  std::optional<walltime::Schedule> warning{};
  std::function<bool(int signal)> signal_ranks{};
};

// The seam's, declared in lib; named here too, where it always was.
using ezpz::RunOutcome;

// The launcher's environment: `base` with the plan's variables set on top.
Env launcher_environment(const Env& base, const EnvList& overrides);

// Spawns argv[0] (searched on PATH) without a shell, env = base + plan.env,
// stdio inherited (stdin from /dev/null when it is a terminal, so a launcher in
// a background process group never stops on SIGTTIN), in its own process group.
// Forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2 to that group; after the launcher exits,
// anything left in its group is killed so nothing is orphaned.
// Writes plan.files once argv[0] is found, just before spawning.
// Throws Error(..., ExitCode::not_found) when argv[0] is not on PATH.
class ProcessExecutor : public Executor {
 public:
  ProcessExecutor(Env base, ProcessOptions options = {});
  RunOutcome run_for_outcome(const LaunchPlan& plan) override;
  void record_output_to(std::string path) override {
    options_.output_record_path = std::move(path);
  }
  // Called once each launcher has started, before its output is recorded (the record file
  // opens after it) or read: work that need not delay the launcher's start (the run record's
  // files) goes there and overlaps its start-up.
  void when_started(std::function<void()> hook) { started_ = std::move(hook); }

 private:
  Env base_;
  ProcessOptions options_;
  std::function<void()> started_;
};

}  // namespace ezpz::sys
