#pragma once
// The one runtime seam (ninja's CommandRunner): what runs a LaunchPlan. Pure: the interface
// and its result only. sys::ProcessExecutor runs the plan as processes; the unit tests'
// recording executor answers from a table, so the retry policy (attempt_loop.hpp) is tested
// without starting one.
#include <chrono>
#include <optional>
#include <string>

#include "ezpz/launch/plan.hpp"
#include "ezpz/output/startup.hpp"
#include "ezpz/supervise/attempts.hpp"

namespace ezpz {

// How a run ended, for the attempt's classification and its verdict.
struct RunOutcome {
  int exit_code = 0;  // the launcher's own, or 128+N when it died of signal N
  // With capture: the status of the first rank that failed on its own, as ezpz-rankenv reported
  // it (its code, or 128+N), while ezpz forwarded no signal of the user's; nullopt: none did.
  std::optional<int> failed_rank_status{};
  int forwarded_signal = 0;  // the first stop signal ezpz received and passed on; 0: none
  int launcher_signal = 0;   // the launcher process itself died of this signal; 0: it exited
  // One of the launcher's own processes on this node died of launcher_signal ("hydra_pmi_proxy
  // (pid 7304)"), and ezpz stopped the launcher; empty: none did.
  std::string launcher_part{};
  Watchdog watchdog = Watchdog::none;                          // which limit stopped it, if one did
  std::chrono::milliseconds to_spawn{0};                       // from run() to the launcher started
  std::optional<std::chrono::milliseconds> to_first_output{};  // with capture
  std::chrono::milliseconds total{0};
  std::string output_tail{};  // with capture: at least the last tail_bytes of the output
  std::string warning{};      // --signal's, once sent: "warned at T-600 s with SIGUSR1"
  std::vector<output::Stamp> startup{};  // with records: the ranks' start-up stamps
  // With rank records: the same of the lines no rank wrote (the launcher's, ezpz-rankenv's
  // reports); nullopt: every line of output_tail may be a rank's or the launcher's.
  std::optional<std::string> launcher_tail{};
  // Every signal ezpz sent or forwarded to the launcher's group, in order, with when.
  std::vector<SentSignal> sent{};
  // The working directory was gone once the launcher had ended (deleted under the job).
  bool cwd_missing = false;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs the plan to completion and says how it ended.
  virtual RunOutcome run_for_outcome(const LaunchPlan& plan) = 0;
  // Where the output of the runs that follow is recorded (when the executor reads it);
  // empty: nowhere. Each attempt of a run has its own file.
  virtual void record_output_to(std::string path) = 0;
  // The exit status ezpz should exit with: the launcher's own code, or 128+N when it died
  // of signal N.
  int run(const LaunchPlan& plan) { return run_for_outcome(plan).exit_code; }
};

}  // namespace ezpz
