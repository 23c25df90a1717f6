#pragma once
// `ezpz launch` as a supervised run, as policy: run an attempt, classify how it ended, then
// retry on the same hosts, swap bad nodes for spares and relaunch, or stop; back off in
// between. Pure: the plan runs through the Executor it is given and every other side effect
// (the run record, this node's leftovers, the back-off's wait, ezpz's lines) goes through
// RunEffects, so a recording fake drives it in the unit tests (ninja's CommandRunner).
#include <functional>
#include <string>
#include <vector>

#include "ezpz/launch/prepared.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/executor.hpp"
#include "ezpz/supervise/run_record.hpp"

namespace ezpz {

struct RetryPolicy {
  int retries = 0;           // further attempts after a failure worth retrying
  int spares = 0;            // hosts held back to replace bad ones; 0: retry on the same hosts
  double retry_delay_s = 5;  // the first back-off, doubled for each next one (cap 60 s)
  // Retries or spares were asked for: a stop is then said in words (alone, the attempt's
  // ending says it all).
  bool failover = false;
  std::string progress_pattern = std::string(k_default_progress);  // --progress-pattern
};

// The loop's side effects other than running the plan.
class RunEffects {
 public:
  virtual ~RunEffects() = default;
  // Whether a run record is kept (without one, the plans are not rendered for it).
  virtual bool recording() const = 0;
  // Writes a file of the run record, best effort: a full disk must not lose the job's status.
  virtual void record(const std::string& relative, const std::string& text) = 0;
  // The same, the text made by `make` only when the file is written: while the record is
  // deferred (NodeEffects), once the launcher has started, not before. `make` must own what it
  // reads (capture by value): a record deferred past the launcher's failed start is written
  // as the stack unwinds.
  virtual void record_lazily(const std::string& relative, std::function<std::string()> make) {
    record(relative, make());
  }
  // Where attempt `attempt`'s output is recorded; empty: it is not.
  virtual std::string output_path(int attempt) = 0;
  // About to run `plan` (the command line, at -v).
  virtual void running(const LaunchPlan& plan) = 0;
  // Stops this run's processes left on this node once the launcher has gone: an orphaned
  // MPI proxy would hold the sockets and GPUs the next attempt needs. "PID COMMAND" each.
  // `launcher_failed`: the attempt did not end with status 0 (the launcher failed, or was
  // stopped): processes of the run may then be anywhere on the node, not only under ezpz.
  virtual std::vector<std::string> stop_leftovers(bool launcher_failed) = 0;
  // Which of `hosts` each address is (a lost peer's, named by gloo): the resolver's lookup.
  // An address that is none of them is left out.
  virtual AddressHosts hosts_at(const std::vector<std::string>& addresses,
                                const std::vector<std::string>& hosts) = 0;
  // Waits `seconds` out; returns the signal that cut it short, 0 when none did.
  virtual int wait(double seconds) = 0;
  // One line of ezpz's own on stderr, "ezpz: " before it.
  virtual void say(const std::string& line) = 0;
};

// What a run carries from attempt to attempt.
struct SupervisedRun {
  std::string id{};
  NodePool pool{};       // the hosts the next attempt runs on, the spares, the retired
  RunSummary summary{};  // run.json, rewritten as the run goes
  SignalDeath last_death{};  // the last attempt's: the same death again is the program's
};

// The pool a run starts with: the plan's hosts, and with spares those held back
// (plan_pool). Throws Error when the allocation is too small.
NodePool initial_pool(const PreparedLaunch& prepared, int spares);

// The plan as run: with the run's id (EZPZ_RUN_ID) added to its environment,
// which is how `ezpz kill` finds the launcher and every rank.
LaunchPlan tagged_plan(LaunchPlan plan, const std::string& run_id);

// Runs the prepared launch until it succeeds, fails for good, or runs out of attempts, each
// attempt's plan.json and verdict.json recorded and run.json kept current. Returns ezpz's
// exit status: the last attempt's (124 when a limit stopped it, 143 at walltime, 128+N when
// signal N cut the back-off short).
int supervise_attempts(const RetryPolicy& policy, const PreparedLaunch& prepared,
                       SupervisedRun& run, Executor& executor, RunEffects& effects);

}  // namespace ezpz
