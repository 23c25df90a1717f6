#include "attempt_loop.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/run_prune.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/run_records.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

namespace {

// CLI11's own range check prints the whole range of a double; this says what is wanted.
const CLI::Validator k_seconds(
    [](std::string& text) -> std::string {
      double value = -1;
      std::size_t used = 0;
      try {
        value = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == text.size() && value >= 0 && std::isfinite(value)) return "";
      return fmt::format("expected a number of seconds, 0 or more; got \"{}\"", text);
    },
    "SECONDS");

const CLI::Validator k_size(
    [](std::string& text) -> std::string {
      if (parse_size(text)) return "";
      return fmt::format("expected a size such as 512M or 4G; got \"{}\"", text);
    },
    "SIZE");

}  // namespace

void add_attempt_options(CLI::App& cmd, AttemptOptions& o) {
  const char* group = "Supervision";
  const CLI::Validator& non_negative = k_seconds;
  cmd.add_option("--timeout", o.timeout_s,
                 "Stop an attempt after SECONDS (SIGTERM, then SIGKILL after --grace); exit 124")
      ->check(non_negative)->group(group);
  cmd.add_option("--idle-timeout", o.idle_timeout_s,
                 "Stop an attempt when no rank has printed anything for SECONDS; exit 124")
      ->check(non_negative)->group(group);
  cmd.add_option("--grace", o.grace_s,
                 fmt::format("Seconds between SIGTERM and SIGKILL when stopping ({})",
                             kill::k_grace_seconds))
      ->check(non_negative)
      ->group(group);
  cmd.add_option("--retries", o.retries,
                 "Attempts after a node failure, hang or timeout (default: --spares)")
      ->check(CLI::Range(0, 100))->group(group);
  cmd.add_option("--retry-delay", o.retry_delay_s,
                 "Seconds before the first retry, doubled for each next one, at most 60 (5)")
      ->check(non_negative)->group(group);
  cmd.add_option("--spares", o.spares,
                 "Hold back K hosts; a failed node is swapped for one and the job relaunched")
      ->check(CLI::Range(0, 1 << 20))->group(group);
  cmd.add_flag("--no-record", o.no_record,
               "Write no run record (default: .ezpz/runs/ID: plan, output, verdicts)")
      ->group(group);
  cmd.add_option("--runs-dir", o.runs_dir, "Where run records go (EZPZ_RUNS_DIR, .ezpz/runs)")
      ->group(group);
  cmd.add_option_function<std::string>(
         "--record-limit", [&o](const std::string& text) { o.record_limit = *parse_size(text); },
         "Most of each attempt's output its output.log keeps, e.g. 200M, 4G; 0: no limit (1G)")
      ->check(k_size)
      ->type_name("SIZE")
      ->group(group);
}

namespace {

using std::chrono::milliseconds;

// How much of a failed rank's output is shown under the verdict.
constexpr std::size_t k_last_lines = 10;

milliseconds to_ms(double seconds) { return milliseconds(static_cast<long long>(seconds * 1000)); }
double to_s(milliseconds duration) { return std::chrono::duration<double>(duration).count(); }

// Retries with spares or --retries: failover mode, where a bad-node line on the launcher's
// stderr ends the attempt at once.
bool failover(const AttemptOptions& o) { return o.spares > 0 || o.retries.value_or(0) > 0; }

// Everything one run carries from attempt to attempt.
struct Run {
  const AttemptOptions& options;
  const PreparedLaunch& prepared;
  const Context& context;
  std::string id;
  NodePool pool;
  BadNodeMatcher matcher;
  std::optional<sys::RunRecorder> recorder;
  RunSummary summary;
};

NodePool initial_pool(const AttemptOptions& o, const PreparedLaunch& prepared) {
  if (o.spares == 0) return {prepared.planned.hosts, {}, {}};
  return plan_pool(prepared.planned.hosts, available_hosts(prepared), o.spares);
}

// Records are best effort once the job runs: a full disk must not lose its exit status.
void record(const Run& run, const std::string& relative, const std::string& text) {
  if (!run.recorder) return;
  try {
    run.recorder->write(relative, text);
  } catch (const Error& e) {
    log::warn("run record: {}", e.what());
  }
}

RunSummary first_summary(const Run& run) {
  RunSummary s;
  s.id = run.id;
  s.started = sys::local_time_iso();
  std::error_code ignored;
  s.cwd = std::filesystem::current_path(ignored).string();
  s.command = run.prepared.request.command;
  s.machine = run.prepared.context.machine;
  s.scheduler = run.prepared.context.scheduler;
  s.job_id = run.prepared.context.job_id;
  s.hosts = run.pool.active;
  s.spares = run.pool.spares;
  return s;
}

// The record's directory decides the id: another launch may have taken this one. A read-only
// or full directory costs the record, never the job.
void open_record(Run& run) {
  try {
    run.recorder.emplace(sys::runs_directory(run.options.runs_dir, run.context.env), run.id);
    run.id = run.recorder->id();
  } catch (const Error& e) {
    log::warn("{}; the job runs without one", e.what());
  }
}

Run start_run(const AttemptOptions& o, const PreparedLaunch& prepared, const Context& context) {
  const std::string host = sys::hostname();
  Run run{o,
          prepared,
          context,
          sys::make_run_id(host),
          initial_pool(o, prepared),
          BadNodeMatcher(prepared.inputs.profile.bad_node_patterns),
          std::nullopt,
          {}};
  if (!o.no_record) open_record(run);
  log::info("run id: {}", run.id);
  run.summary = first_summary(run);
  run.summary.launched_on = host;
  if (!run.recorder) return run;
  record(run, "hostfile", hostfile_text(run.pool.active));
  if (!run.pool.spares.empty()) record(run, "spares", hostfile_text(run.pool.spares));
  record(run, "run.json", summary_json(run.summary));
  log::info("run record: {}", run.recorder->directory());
  return run;
}

sys::ProcessOptions process_options(const Run& run, const std::string& output_path) {
  const AttemptOptions& o = run.options;
  sys::ProcessOptions p;
  p.grace = to_ms(o.grace_s);
  p.timeout = to_ms(o.timeout_s);
  p.idle_timeout = to_ms(o.idle_timeout_s);
  p.output_record_path = output_path;
  p.output_record_limit = o.record_limit;
  // Without a reason to read the output it is left alone: the ranks write straight to ezpz's
  // own stdout and stderr, as with no launcher in between.
  p.capture_output = !o.no_record || o.idle_timeout_s > 0 || failover(o);
  if (failover(o) && !run.matcher.empty()) {
    const BadNodeMatcher* matcher = &run.matcher;
    p.stop_on_stderr_line = [matcher](std::string_view line) {
      return !matcher->hosts_in(line).empty();
    };
  }
  return p;
}

// Processes of this run still alive on this node once the launcher has gone: an MPI proxy
// or an ssh client that a launcher stopped mid-start-up leaves orphaned (Hydra's do not
// exit when mpiexec dies before they connect). They would outlive the run, and hold
// sockets and GPUs the next attempt needs, so they get the launcher's own ending: SIGTERM,
// then SIGKILL after a short grace. Other nodes' are beyond reach here; `ezpz kill --all-nodes`
// sweeps them.
std::vector<std::string> stop_leftovers(const Run& run) {
  const auto targets = kill::select_targets(sys::list_processes(), run.id, getpid(), {});
  std::vector<std::string> stopped;
  for (const sys::SignalResult& r : sys::signal_processes(targets, SIGTERM, milliseconds(500)))
    stopped.push_back(fmt::format("{} {}", r.process.pid, r.process.command));
  if (!stopped.empty())
    log::write("ezpz: ", fmt::format("stopped {} process(es) of the run left on this node after "
                                     "the launcher exited: {}",
                                     stopped.size(), fmt::join(stopped, "; ")));
  return stopped;
}

// Where this attempt's output is recorded; empty when its directory cannot be made.
std::string attempt_output_path(const Run& run, int attempt) {
  try {
    return run.recorder->attempt_directory(attempt) + "/output.log";
  } catch (const Error& e) {
    log::warn("{}; this attempt's output is not recorded", e.what());
    return "";
  }
}

AttemptVerdict run_one(const Run& run, int attempt, const PlannedLaunch& planned) {
  std::string output_path;
  if (run.recorder) {
    output_path = attempt_output_path(run, attempt);
    const std::string plan = render_json(planned, run.prepared.context) + "\n";
    if (attempt == 1) record(run, "plan.json", plan);  // with --spares, the spares held back
    record(run, fmt::format("attempt-{}/plan.json", attempt), plan);
  }
  if (log::enabled(log::Level::info)) log::info("running: {}", render_command(planned.plan));
  sys::RunOutcome outcome = sys::ProcessExecutor(run.context.env, process_options(run, output_path))
                                .run_for_outcome(tagged_plan(planned.plan, run.id));
  AttemptFacts facts{outcome.exit_code,
                     outcome.forwarded_signal != 0,
                     outcome.forwarded_signal,
                     !run.prepared.context.job_id.empty(),
                     outcome.watchdog,
                     outcome.output_tail,
                     planned.hosts,
                     planned.topology.ppn,
                     outcome.launcher_signal,
                     planned.topology.world_size};
  AttemptVerdict v;
  v.attempt = attempt;
  v.hosts = planned.hosts;
  v.launcher_exit = outcome.exit_code;
  v.exit_code = attempt_exit_code(outcome.watchdog, outcome.exit_code);
  v.forwarded_signal = outcome.forwarded_signal;
  v.watchdog = outcome.watchdog;
  v.classification = classify_attempt(facts, run.prepared.inputs.profile.bad_node_patterns);
  v.to_spawn_s = to_s(outcome.to_spawn);
  if (outcome.to_first_output) v.to_first_output_s = to_s(*outcome.to_first_output);
  v.total_s = to_s(outcome.total);
  v.leftovers = stop_leftovers(run);
  if (!v.classification.failed.empty()) {
    v.last_lines = lines_before_failure(outcome.output_tail, k_last_lines);
    v.output_path = output_path;
  }
  return v;
}

// What comes after `v`: another attempt (true), on new hosts when spares allow, or the end.
bool plan_next(Run& run, AttemptVerdict& v, int retries_left) {
  const Ending ending = v.classification.ending;
  if (ending == Ending::success) return false;
  if (!worth_retrying(ending)) {
    v.next = fmt::format("stop: {} is not retried", to_string(ending));
    return false;
  }
  if (retries_left <= 0) {
    v.next = "stop: no retries left";
    return false;
  }
  if (run.options.spares > 0) {
    v.swaps = replace_bad_nodes(run.pool, v.classification.bad_hosts);
    if (v.swaps.empty()) {
      v.next = "stop: no spare host left";
      return false;
    }
    v.next = fmt::format("retry on new hosts ({})", fmt::join(v.swaps, ", "));
    return true;
  }
  v.next = "retry on the same hosts";
  return true;
}

// The failed rank's last words under the verdict: what a user looks for first.
void report_last_lines(const AttemptVerdict& v) {
  if (v.last_lines.empty()) return;
  const FailedRank& first = v.classification.failed.front();
  log::write("ezpz: ",
             fmt::format("last lines before {} on {} failed{}:", describe_ranks(first), first.host,
                         v.output_path.empty() ? "" : " (all in " + v.output_path + ")"));
  for (const std::string& line : v.last_lines) log::write("ezpz: ", "  " + line);
}

void report(const AttemptVerdict& v, bool failover_mode) {
  if (v.classification.ending == Ending::success) return;
  log::write("ezpz: ", fmt::format("attempt {} ended: {}: {}", v.attempt,
                                   to_string(v.classification.ending), v.classification.reason));
  report_last_lines(v);
  if (failover_mode && v.next.starts_with("stop")) log::write("ezpz: ", v.next);
}

// After the job has ended, off its critical path: the records beyond the newest
// EZPZ_RUNS_KEEP go, so .ezpz/runs does not grow with every launch. Best effort.
void prune_records(const Run& run) {
  if (!run.recorder) return;
  const RunsKept kept = runs_kept(run.context.env);
  if (!kept.warning.empty()) log::warn("{}", kept.warning);
  if (kept.newest) {
    sys::prune_runs(sys::runs_directory(run.options.runs_dir, run.context.env), {kept.newest, {}},
                    false);
  }
}

int finish(Run& run, const AttemptVerdict& v) {
  run.summary.exit_code = v.exit_code;
  run.summary.ending = std::string(to_string(v.classification.ending));
  run.summary.reason = v.classification.reason;
  record(run, "run.json", summary_json(run.summary));
  prune_records(run);
  return v.exit_code;
}

}  // namespace

int run_attempts(const AttemptOptions& o, const PreparedLaunch& prepared, const Context& context) {
  Run run = start_run(o, prepared, context);  // its layout errors come first
  check_launcher_program(prepared, context);
  const int retries = o.retries.value_or(o.spares);
  for (int attempt = 1;; ++attempt) {
    const PlannedLaunch planned =
        attempt == 1 && o.spares == 0 ? prepared.planned : plan_on_hosts(prepared, run.pool.active);
    if (attempt > 1) log::write("ezpz: ", fmt::format("attempt {} on {}", attempt, fmt::join(planned.hosts, " ")));
    AttemptVerdict v = run_one(run, attempt, planned);
    const bool again = plan_next(run, v, retries - (attempt - 1));
    record(run, fmt::format("attempt-{}/verdict.json", attempt), verdict_json(v));
    run.summary.attempts = attempt;
    report(v, failover(o));
    if (!again) return finish(run, v);
    record(run, "run.json", summary_json(run.summary));
    const double delay = backoff_seconds(attempt + 1, o.retry_delay_s);
    log::write("ezpz: ", fmt::format("{}; attempt {} in {:g} s", v.next, attempt + 1, delay));
    if (int sig = sys::sleep_unless_signalled(to_ms(delay))) {
      v.classification = {Ending::interrupted, {}, {}, fmt::format("signal {} during the back-off", sig)};
      v.exit_code = 128 + sig;
      return finish(run, v);
    }
  }
}

}  // namespace ezpz
