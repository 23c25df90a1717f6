#pragma once
// The one runtime seam (ninja's CommandRunner): runs a LaunchPlan.
#include <chrono>
#include <string>

#include "ezpz/env.hpp"
#include "ezpz/plan.hpp"

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
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  // A launcher still running this long after it started is stopped as if ezpz
  // had been sent SIGTERM (then SIGKILL after `grace`); zero: no limit.
  std::chrono::milliseconds timeout{0};
  // The launcher's stdout goes to this file (created or truncated, mode 0600)
  // instead of ezpz's own; empty: inherited.
  std::string stdout_path{};
};

// Spawns argv[0] (searched on PATH) without a shell, env = base + plan.env,
// stdio inherited (stdin from /dev/null when it is a terminal, so a launcher in
// a background process group never stops on SIGTTIN), in its own process group.
// Forwards SIGINT, SIGTERM, SIGHUP to that group; after the launcher exits,
// anything left in its group is killed so nothing is orphaned.
// Writes plan.files once argv[0] is found, just before spawning.
// Throws Error(..., ExitCode::not_found) when argv[0] is not on PATH.
class ProcessExecutor : public Executor {
 public:
  ProcessExecutor(Env base, ProcessOptions options = {});
  int run(const LaunchPlan& plan) override;

 private:
  Env base_;
  ProcessOptions options_;
};

}  // namespace ezpz::sys
