#pragma once
// The one runtime seam (ninja's CommandRunner): runs a LaunchPlan.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ezpz/core/env.hpp"
#include "ezpz/launch/plan.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/kill.hpp"

namespace ezpz::sys {

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs the plan to completion and returns the exit status ezpz should exit
  // with: the launcher's own code, or 128+N when it died of signal N.
  virtual int run(const LaunchPlan& plan) = 0;
};

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
  // With capture: no output from the launcher for this long stops it as
  // `timeout` does; zero: no limit.
  std::chrono::milliseconds idle_timeout{0};
  // With capture: shown each line of the launcher's stderr; returning true stops the launcher
  // as the limits do (Watchdog::signature): a line naming a failed node ends the attempt now
  // rather than after the hang that usually follows.
  std::function<bool(std::string_view line)> stop_on_stderr_line{};
  // With capture: how much of the output's end the outcome keeps.
  std::size_t tail_bytes = 256 * 1024;
};

// How a run ended, for the attempt's classification and its verdict.
struct RunOutcome {
  int exit_code = 0;         // the launcher's own, or 128+N when it died of signal N
  int forwarded_signal = 0;  // the first stop signal ezpz received and passed on; 0: none
  int launcher_signal = 0;   // the launcher process itself died of this signal; 0: it exited
  Watchdog watchdog = Watchdog::none;  // which limit stopped it, if one did
  std::chrono::milliseconds to_spawn{0};          // from run() to the launcher started
  std::optional<std::chrono::milliseconds> to_first_output;  // with capture
  std::chrono::milliseconds total{0};
  std::string output_tail;  // with capture: at least the last tail_bytes of the output
};

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
  int run(const LaunchPlan& plan) override { return run_for_outcome(plan).exit_code; }
  RunOutcome run_for_outcome(const LaunchPlan& plan);

 private:
  Env base_;
  ProcessOptions options_;
};

}  // namespace ezpz::sys
