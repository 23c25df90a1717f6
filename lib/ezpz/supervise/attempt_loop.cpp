#include "ezpz/supervise/attempt_loop.hpp"

#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/output/stamp_line.hpp"
#include "ezpz/supervise/attempt_facts.hpp"
#include "ezpz/supervise/kill.hpp"
#include "ezpz/supervise/known_errors.hpp"

namespace ezpz {

namespace {

using std::chrono::milliseconds;

// How much of a failed rank's output is shown under the verdict.
constexpr std::size_t k_last_lines = 10;

double to_s(milliseconds duration) {
  return std::chrono::duration<double>(duration).count();
}

std::optional<double> to_s(const std::optional<milliseconds>& duration) {
  if (!duration) return std::nullopt;
  return to_s(*duration);
}

// The loop's fixed parts, passed as one.
struct Loop {
  const RetryPolicy& policy;
  const PreparedLaunch& prepared;
  SupervisedRun& run;
  Executor& executor;
  RunEffects& effects;
};

// Records the plan (attempt_plan_file) and returns where the attempt's output goes. No copy
// for attempt 1: each file is a creation and a removal on the launch path (bench/README.md).
std::string record_plan(const Loop& loop, int attempt, const PlannedLaunch& planned) {
  if (!loop.effects.recording()) return "";
  std::string output_path = loop.effects.output_path(attempt);
  loop.effects.record_lazily(
      attempt_plan_file(attempt),
      [planned, context = loop.prepared.context] { return render_json(planned, context) + "\n"; });
  return output_path;
}

// The job's hosts at the addresses of lost peers the output names; looked up only for a failed
// attempt that names one.
AddressHosts lost_peer_hosts(const Loop& loop, const RunOutcome& outcome,
                             const PlannedLaunch& planned) {
  if (outcome.exit_code == 0 && outcome.watchdog == Watchdog::none) return {};
  const std::vector<std::string> addresses = lost_peer_addresses(outcome.output_tail);
  return addresses.empty() ? AddressHosts{} : loop.effects.hosts_at(addresses, planned.hosts);
}

// With rank records: the ranks whose ezpz-rankenv sent its `exec` stamp.
std::optional<std::size_t> ranks_started(const RunOutcome& outcome) {
  if (!outcome.launcher_tail) return std::nullopt;
  std::set<long> ranks;
  for (const output::Stamp& stamp : outcome.startup) {
    if (stamp.phase == output::k_exec_phase) ranks.insert(stamp.rank);
  }
  return ranks.size();
}

// Everything the verdict is decided from, as the attempt left it: attempt-N/facts.json keeps
// the same, so `ezpz runs explain` decides it again from what ezpz saw, not from a guess.
AttemptFacts attempt_facts(const Loop& loop, const RunOutcome& outcome,
                           const PlannedLaunch& planned) {
  return {.exit_status = outcome.exit_code,
          .interrupted = outcome.forwarded_signal != 0,
          .forwarded_signal = outcome.forwarded_signal,
          .scheduler_job = !loop.prepared.context.job_id.empty(),
          .watchdog = outcome.watchdog,
          .output = outcome.output_tail,
          .hosts = planned.hosts,
          .ppn = planned.topology.ppn,
          .launcher_signal = outcome.launcher_signal,
          .launcher_part = outcome.launcher_part,
          .world_size = planned.topology.world_size,
          .launcher_output = outcome.launcher_tail,
          .ranks_started = ranks_started(outcome),
          .previous_death = loop.run.last_death,
          .progress_pattern = loop.policy.progress_pattern,
          .address_hosts = lost_peer_hosts(loop, outcome, planned),
          .sent = outcome.sent,
          .failed_rank_status = outcome.failed_rank_status,
          .cwd_missing = outcome.cwd_missing};
}

// A clean exit decides nothing worth keeping: its facts are written only for an attempt that
// did not end cleanly (a success's would be one more file on the launch path).
bool worth_its_facts(const AttemptFacts& f) {
  return f.exit_status != 0 || f.watchdog != Watchdog::none || f.failed_rank_status ||
         f.interrupted || !f.sent.empty();
}

AttemptVerdict run_one(const Loop& loop, int attempt, const PlannedLaunch& planned) {
  std::string output_path = record_plan(loop, attempt, planned);
  loop.effects.running(planned.plan);
  loop.executor.record_output_to(output_path);
  const RunOutcome outcome = loop.executor.run_for_outcome(tagged_plan(planned.plan, loop.run.id));
  const AttemptFacts facts = attempt_facts(loop, outcome, planned);
  const std::vector<BadNodePattern>& patterns = loop.prepared.inputs.profile.bad_node_patterns;
  if (loop.effects.recording() && worth_its_facts(facts)) {
    loop.effects.record_lazily(attempt_dir_name(attempt) + "/" + std::string(k_facts_file),
                               [facts, patterns] { return facts_json(facts, patterns); });
  }
  Classification classification = classify_attempt(facts, patterns);
  const int exit_code = classification.exit_code;
  AttemptVerdict v{.attempt = attempt,
                   .hosts = planned.hosts,
                   .exit_code = exit_code,
                   .launcher_exit = outcome.exit_code,
                   .forwarded_signal = outcome.forwarded_signal,
                   .watchdog = outcome.watchdog,
                   .classification = std::move(classification),
                   .swaps = {},
                   .next = {},
                   .leftovers = loop.effects.stop_leftovers(exit_code != 0),
                   .to_spawn_s = to_s(outcome.to_spawn),
                   .to_first_output_s = to_s(outcome.to_first_output),
                   .total_s = to_s(outcome.total)};
  loop.run.last_death = v.classification.death;
  if (!v.classification.failed.empty()) {
    v.last_lines = lines_before_failure(outcome.output_tail, k_last_lines);
    v.output_path = std::move(output_path);
  }
  if (v.classification.ending != Ending::success) v.hints = known_error_hints(outcome.output_tail);
  v.warning = outcome.warning;
  v.startup = outcome.startup;
  v.ranks_started = facts.ranks_started;
  return v;
}

// How the host swapped out was chosen: "scraped" (a bad-node pattern or a lost peer named it)
// or "reported" (the launcher's report of a rank's death named its host).
std::string failover_basis(const Classification& c) {
  const bool pattern = c.rule.starts_with("bad_node_patterns") || c.rule.starts_with("peer_lost");
  return pattern ? "scraped" : "reported";
}

// Nothing left to try a failure worth another attempt with.
bool exhausted(AttemptVerdict& v, std::string why) {
  v.next = "stop: " + std::move(why);
  v.exhausted = true;
  return false;
}

// What comes after `v`: another attempt (true), on new hosts for those convicted (a spare each),
// on the same hosts when none was (a host is retired only on evidence), or the end.
bool plan_next(const RetryPolicy& policy, NodePool& pool, AttemptVerdict& v, int retries_left) {
  const Ending ending = v.classification.ending;
  if (ending == Ending::success) return false;
  if (!worth_retrying(ending)) {
    v.next = fmt::format("stop: {} is not retried", to_string(ending));
    return false;
  }
  if (retries_left <= 0) {
    return exhausted(v,
                     policy.spares > 0 ? "spares exhausted: no retries left" : "no retries left");
  }
  const std::vector<std::string>& bad = v.classification.bad_hosts;
  if (policy.spares > 0 && !bad.empty()) {
    if (pool.spares.empty()) {
      return exhausted(
          v, fmt::format("spares exhausted: no spare host left for {}", fmt::join(bad, ", ")));
    }
    v.swaps = replace_bad_nodes(pool, bad);
  }
  if (v.swaps.empty()) {
    v.next = policy.spares > 0 && bad.empty()
                 ? "retry on the same hosts (no host named: none retired)"
                 : "retry on the same hosts";
    return true;
  }
  v.failover = failover_basis(v.classification);
  v.next = fmt::format("retry on new hosts ({})", fmt::join(v.swaps, ", "));
  return true;
}

// The failed rank's last words under the verdict: what a user looks for first.
void report_last_lines(const AttemptVerdict& v, RunEffects& effects) {
  if (v.last_lines.empty()) return;
  const FailedRank& first = v.classification.failed.front();
  effects.say(fmt::format("last lines before {} on {} failed{}:", describe_ranks(first), first.host,
                          v.output_path.empty() ? "" : " (all in " + v.output_path + ")"));
  for (const std::string& line : v.last_lines) effects.say("  " + line);
}

void report(const AttemptVerdict& v, bool failover, RunEffects& effects) {
  if (v.classification.ending == Ending::success) return;
  effects.say(fmt::format("attempt {} ended: {}: {}", v.attempt, to_string(v.classification.ending),
                          v.classification.reason));
  report_last_lines(v, effects);
  for (const std::string& hint : v.hints) effects.say(hint);
  if (failover && v.next.starts_with("stop")) effects.say(v.next);
}

// The run's end: the last attempt's, or with --spares and nothing left to retry with, exit 75
// ("spares_exhausted") whatever the last attempt's status: a wrapper script or a batch system
// can then tell "resubmit" from a crash or a walltime kill.
int finish(const Loop& loop, const AttemptVerdict& v) {
  RunSummary& summary = loop.run.summary;
  const bool spent = v.exhausted && loop.policy.spares > 0;
  summary.exit_code = spent ? static_cast<int>(ExitCode::spares_exhausted) : v.exit_code;
  summary.ending = spent ? "spares_exhausted" : std::string(to_string(v.classification.ending));
  summary.reason =
      spent ? fmt::format("spares exhausted after {} attempts; the last: {}: {}", v.attempt,
                          to_string(v.classification.ending), v.classification.reason)
            : v.classification.reason;
  loop.effects.record("run.json", summary_json(summary));
  if (spent)
    loop.effects.say(
        fmt::format("spares exhausted after {} attempts: exit {}", v.attempt, *summary.exit_code));
  return *summary.exit_code;
}

// Attempt 1 runs the plan as made, unless spares were held back from it.
PlannedLaunch plan_attempt(const Loop& loop, int attempt) {
  if (attempt == 1 && loop.policy.spares == 0) return loop.prepared.planned;
  return plan_on_hosts(loop.prepared, loop.run.pool.active);
}

// The back-off before attempt `next`; a signal during it ends the run as interrupted.
std::optional<int> back_off(const Loop& loop, AttemptVerdict& v, int next) {
  const double delay = backoff_seconds(next, loop.policy.retry_delay_s);
  loop.effects.say(fmt::format("{}; attempt {} in {:g} s", v.next, next, delay));
  const int sig = loop.effects.wait(delay);
  if (sig == 0) return std::nullopt;
  v.classification = {.ending = Ending::interrupted,
                      .bad_hosts = {},
                      .failed = {},
                      .reason = fmt::format("signal {} during the back-off", sig)};
  v.exit_code = 128 + sig;
  return finish(loop, v);
}

}  // namespace

NodePool initial_pool(const PreparedLaunch& prepared, int spares) {
  if (spares == 0) return {.active = prepared.planned.hosts, .spares = {}, .retired = {}};
  return plan_pool(prepared.planned.hosts, available_hosts(prepared), spares);
}

LaunchPlan tagged_plan(LaunchPlan plan, const std::string& run_id) {
  plan.env.emplace_back(std::string(kill::k_run_id_variable), run_id);
  return plan;
}

int supervise_attempts(const RetryPolicy& policy, const PreparedLaunch& prepared,
                       SupervisedRun& run, Executor& executor, RunEffects& effects) {
  const Loop loop{
      .policy = policy, .prepared = prepared, .run = run, .executor = executor, .effects = effects};
  for (int attempt = 1;; ++attempt) {
    const PlannedLaunch planned = plan_attempt(loop, attempt);
    if (attempt > 1) {
      effects.say(fmt::format("attempt {} on {}", attempt, fmt::join(planned.hosts, " ")));
    }
    AttemptVerdict v = run_one(loop, attempt, planned);
    const bool again = plan_next(policy, run.pool, v, policy.retries - (attempt - 1));
    effects.record(attempt_dir_name(attempt) + "/verdict.json", verdict_json(v));
    run.summary.attempts = attempt;
    report(v, policy.failover, effects);
    if (!again) return finish(loop, v);
    effects.record("run.json", summary_json(run.summary));
    if (std::optional<int> interrupted = back_off(loop, v, attempt + 1)) return *interrupted;
  }
}

}  // namespace ezpz
