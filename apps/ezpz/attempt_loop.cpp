#include "attempt_loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "cmd_kill.hpp"
#include "cmd_stacks.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/output/rank_records.hpp"
#include "ezpz/supervise/attempt_loop.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/run_prune.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/supervise/walltime_warning.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/job_end.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/run_effects.hpp"
#include "ezpz/sys/run_records.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

namespace {

bool is_seconds(const std::string& text) {
  double value = -1;
  std::size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  return used == text.size() && value >= 0 && std::isfinite(value);
}

// CLI11's own range check prints the whole range of a double; this says what is wanted.
const CLI::Validator k_seconds(
    [](std::string& text) -> std::string {
      if (is_seconds(text)) return "";
      return fmt::format("expected a number of seconds, 0 or more; got \"{}\"", text);
    },
    "SECONDS");

const CLI::Validator k_seconds_or_off(
    [](std::string& text) -> std::string {
      if (text == "off" || is_seconds(text)) return "";
      return fmt::format("expected a number of seconds, 0 or more, or off; got \"{}\"", text);
    },
    "");  // the option's type_name says it

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
  cmd.add_option("--time-limit", o.timeout_s,
                 "Stop an attempt after SECONDS of wall time (SIGTERM, then SIGKILL after "
                 "--grace); exit 124")
      ->check(non_negative)
      ->group(group);
  CLI::Option* idle =
      cmd.add_option("--idle-timeout", o.idle_timeout_s,
                     "Stop an attempt when no rank has printed anything for SECONDS; exit 124")
          ->check(non_negative)
          ->group(group);
  // The Python ezpz's --timeout is this idle watchdog ("not a total walltime"): a script
  // carried over must never have a healthy, talkative job killed at a wall-clock limit.
  cmd.add_option("--timeout", o.idle_timeout_s,
                 "The same as --idle-timeout (the Python ezpz's spelling); wall time is "
                 "--time-limit")
      ->check(non_negative)
      ->excludes(idle)
      ->group(group);
  cmd.add_option("--progress-pattern", o.progress_pattern,
                 "A line the job prints as it trains: --idle-timeout before any such line is "
                 "never_started, after one a hang (step=/iter:/epoch=)")
      ->type_name("REGEX")
      ->group(group);
  cmd.add_option_function<std::string>(
         "--kill-on-bad-exit",
         [&o](const std::string& text) {
           o.kill_on_bad_exit_s = text == "off" ? std::nullopt : std::optional(std::stod(text));
         },
         fmt::format("Stop the job SECONDS after a rank fails if it still runs, as srun "
                     "--kill-on-bad-exit; off: wait for every rank ({})",
                     k_default_kill_on_bad_exit_s))
      ->type_name("SECONDS|off")
      ->check(k_seconds_or_off)
      ->group(group);
  cmd.add_option("--grace", o.grace_s,
                 fmt::format("Seconds between SIGTERM and SIGKILL when stopping ({})",
                             kill::k_grace_seconds))
      ->check(non_negative)
      ->group(group);
  cmd.add_option("--retries", o.retries,
                 "Attempts after a node failure, hang or timeout (default: --spares)")
      ->check(CLI::Range(0, 100))
      ->group(group);
  cmd.add_option("--retry-delay", o.retry_delay_s,
                 "Seconds before the first retry, doubled for each next one, at most 60 (5)")
      ->check(non_negative)
      ->group(group);
  cmd.add_option("--spares", o.spares,
                 "Hold back K hosts; a failed node is swapped for one and the job relaunched")
      ->check(CLI::Range(0, 1 << 20))
      ->group(group);
  cmd.add_option("--signal", o.signal,
                 "Send SIG to every rank SECONDS before the job's walltime ends (default 60), as "
                 "srun --signal: USR1@600")
      ->type_name("SIG[@SECONDS]")
      ->group(group);
  cmd.add_flag("--no-record", o.no_record,
               "Write no run record (default: .ezpz/runs/ID: plan, output, verdicts)")
      ->group(group);
  cmd.add_flag("--no-python-hook", o.no_python_hook,
               "Put nothing on the ranks' PYTHONPATH (ezpz stacks then sees no Python stacks)")
      ->group(group);
  cmd.add_option("--runs-dir", o.runs_dir, "Where run records go (EZPZ_RUNS_DIR, .ezpz/runs)")
      ->group(group);
  cmd.add_option_function<std::string>(
         "--record-limit", [&o](const std::string& text) { o.record_limit = *parse_size(text); },
         "Most of each attempt's output its output.log keeps, e.g. 200M, 4G; 0: no limit (1G)")
      ->check(k_size)
      ->type_name("SIZE")
      ->group(group);
  cmd.add_option_function<std::string>(
         "--record-floor", [&o](const std::string& text) { o.record_floor = *parse_size(text); },
         "The free space the record always leaves on its filesystem, for the job's own files: "
         "it stops, and gives back what it took, below it; 0: none (EZPZ_RECORD_FLOOR, 1G)")
      ->check(k_size)
      ->type_name("SIZE")
      ->group(group);
  cmd.add_option(
         "--output", o.output,
         "The console: label, dedup, rank0 or raw (EZPZ_OUTPUT; dedup on a terminal, else label)")
      ->type_name("MODE")
      ->group(group);
}

namespace {

using std::chrono::milliseconds;

milliseconds to_ms(double seconds) {
  return milliseconds(static_cast<long long>(seconds * 1000));
}

// Retries with spares or --retries: failover mode, where a bad-node line on the launcher's
// stderr ends the attempt at once.
bool failover(const AttemptOptions& o) {
  return o.spares > 0 || o.retries.value_or(0) > 0;
}

RetryPolicy retry_policy(const AttemptOptions& o) {
  return {.retries = o.retries.value_or(o.spares),
          .spares = o.spares,
          .retry_delay_s = o.retry_delay_s,
          .failover = failover(o),
          .progress_pattern = o.progress_pattern};
}

RunSummary first_summary(const SupervisedRun& run, const PreparedLaunch& prepared) {
  RunSummary s;
  s.id = run.id;
  const auto now = std::chrono::system_clock::now();
  s.started = sys::local_time_iso(now);
  s.started_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::error_code ignored;
  s.cwd = std::filesystem::current_path(ignored).string();
  s.command = prepared.request.command;
  s.machine = prepared.context.machine;
  s.scheduler = prepared.context.scheduler;
  s.job_id = prepared.context.job_id;
  s.hosts = run.pool.active;
  s.spares = run.pool.spares;
  return s;
}

// The run's id and its record's first files: hostfile, spares, run.json.
void start_record(const AttemptOptions& o, const PreparedLaunch& prepared, const Context& context,
                  const std::string& host, SupervisedRun& run, sys::NodeEffects& effects) {
  if (!o.no_record) effects.open_record(o.runs_dir, context.env);
  run.id = effects.id();
  log::info("run id: {}", run.id);
  run.summary = first_summary(run, prepared);
  run.summary.launched_on = host;
  if (!effects.recording()) return;
  effects.record_lazily("hostfile", [hosts = run.pool.active] { return hostfile_text(hosts); });
  if (!run.pool.spares.empty()) {
    effects.record_lazily("spares", [hosts = run.pool.spares] { return hostfile_text(hosts); });
  }
  effects.record_lazily("run.json", [summary = run.summary] { return summary_json(summary); });
  log::info("run record: {}", effects.directory());
}

// The watcher stops an attempt at a line that names one of the attempt's hosts (the pool's
// active ones, as the attempt runs): a host outside the allocation is never a bad node.
// --record-floor's value, else EZPZ_RECORD_FLOOR's, else the default.
std::uint64_t record_floor(const AttemptOptions& o, const Env& env) {
  if (o.record_floor) return *o.record_floor;
  const std::optional<std::string> text = get_nonempty(env, "EZPZ_RECORD_FLOOR");
  if (!text) return output::k_default_record_floor;
  if (auto size = parse_size(*text)) return *size;
  throw Error(
      fmt::format("EZPZ_RECORD_FLOOR: expected a size such as 512M or 4G; got \"{}\"", *text));
}

sys::ProcessOptions process_options(const AttemptOptions& o, const BadNodeMatcher& matcher,
                                    const NodePool& pool) {
  sys::ProcessOptions p;
  p.grace = to_ms(o.grace_s);
  p.timeout = to_ms(o.timeout_s);
  p.idle_timeout = to_ms(o.idle_timeout_s);
  p.output_record_limit = o.record_limit;
  // Without a reason to read the output it is left alone: the ranks write straight to ezpz's
  // own stdout and stderr, as with no launcher in between (raw's passed pipes are none).
  const bool rank_aware = o.console && *o.console != output::ConsoleMode::raw;
  p.capture_output = !o.no_record || o.idle_timeout_s > 0 || failover(o) || rank_aware;
  p.console = o.console;
  if (o.kill_on_bad_exit_s) p.stop_after_rank_failure = to_ms(*o.kill_on_bad_exit_s);
  if (failover(o) && !matcher.empty()) {
    p.stop_on_stderr_line = [&matcher, &pool](std::string_view line) {
      const std::vector<std::string> hosts = matcher.hosts_in(line);
      return std::any_of(hosts.begin(), hosts.end(),
                         [&](const std::string& host) { return among_hosts(pool.active, host); });
    };
  }
  return p;
}

}  // namespace

std::string python_hook_dir(const Context& context) {
  for (const std::string& dir :
       {context.self_dir + "/python", context.self_dir + "/../libexec/ezpz/python"}) {
    if (sys::path_kind(dir + "/sitecustomize.py") == sys::PathKind::file) return dir;
  }
  return "";
}

namespace {

// attempt-N/stacks beside attempt-N/output.log; empty without a record.
std::string stacks_directory(const std::string& output_record) {
  if (output_record.empty()) return "";
  return (std::filesystem::path(output_record).parent_path() / "stacks").string();
}

// ezpz's environment with the Python stack hook's directory first on PYTHONPATH, where ezpz
// has one: Python ranks then keep a way to print their stacks without stopping (README: Stacks
// of hung ranks). --no-python-hook: none.
Env with_python_hook(const Context& context, const AttemptOptions& o) {
  const std::string dir = python_hook_dir(context);
  return o.no_python_hook || dir.empty() ? context.env : with_python_path(context.env, dir);
}

// --signal's schedule, from the job's end as the scheduler says it once now; nullopt (and one
// warning line) when it cannot be known: the run goes on without the signal.
std::optional<walltime::Schedule> warning_schedule(const AttemptOptions& o,
                                                   const PreparedLaunch& prepared,
                                                   const Context& context) {
  if (o.signal.empty()) return std::nullopt;
  const walltime::WarnSpec spec = walltime::parse_spec(o.signal);
  const walltime::Delivery delivery =
      walltime::delivery_for(prepared.planned.launcher, spec.signal);
  if (delivery == walltime::Delivery::node_step) {
    log::info("{}", walltime::node_step_note(spec, prepared.planned.launcher));
  }
  const sys::JobEnd job =
      sys::read_job_end(prepared.context.scheduler, prepared.context.job_id, context.env);
  if (!job.end) {
    log::warn("{}", walltime::unknown_end_warning(spec, job.why));
    return std::nullopt;
  }
  const std::int64_t now = sys::epoch_now();
  log::info("--signal {}: the job ends in {} s; {} in {} s", walltime::describe(spec),
            *job.end - now, signal_name(spec.signal),
            walltime::seconds_until_warning(*job.end, now, spec));
  return walltime::Schedule{.spec = spec, .end = *job.end, .delivery = delivery};
}

// While the first launcher starts, off the job's critical path (after the job had ended, it
// was on it: ezpz's exit waited for it): the records beyond the newest EZPZ_RUNS_KEEP go, in
// batches (prune_due), so .ezpz/runs does not grow with every launch. Best effort.
void prune_records(const AttemptOptions& o, const Context& context) {
  const RunsKept kept = runs_kept(context.env);
  if (!kept.warning.empty()) log::warn("{}", kept.warning);
  if (kept.newest) {
    sys::prune_runs(sys::runs_directory(o.runs_dir, context.env),
                    {.keep = kept.newest, .older_than = std::nullopt, .batched = true}, false);
  }
}

}  // namespace

// --output's mode, else EZPZ_OUTPUT's, else the default for where ezpz's stdout goes.
output::ConsoleMode console_mode(const AttemptOptions& o, const Env& env) {
  const std::string& option = o.output;
  const std::optional<std::string> variable = get_nonempty(env, "EZPZ_OUTPUT");
  if (option.empty() && !variable) {
    return output::default_console_mode(::isatty(STDOUT_FILENO) == 1);
  }
  const std::string& name = option.empty() ? *variable : option;
  if (auto mode = output::console_mode_named(name)) return *mode;
  throw Error(fmt::format("{}{}: no such console mode; one of label, dedup, rank0, raw",
                          option.empty() ? "EZPZ_OUTPUT=" : "--output ", name));
}

// The console mode the pump applies: only where ezpz-rankenv writes records (the plan says so).
// raw: where the ranks can pass ezpz their pipes.
std::optional<output::ConsoleMode> records_console(output::ConsoleMode mode,
                                                   const LaunchPlan& plan) {
  if (mode == output::ConsoleMode::raw) {
    return plan.ranks_can_pass_pipes ? std::optional(mode) : std::nullopt;
  }
  const auto records = [](const auto& entry) { return entry.first == output::k_records_variable; };
  if (std::any_of(plan.env.begin(), plan.env.end(), records)) return mode;
  log::info(
      "output: the ranks write no rank records (torchrun, Open MPI, --no-rank-env): their "
      "output is passed through as bytes, unlabelled");
  return std::nullopt;
}

RunEnd run_attempts(const AttemptOptions& o, const PreparedLaunch& prepared,
                    const Context& context) {
  const std::string host = sys::hostname();
  sys::NodeEffects effects(sys::make_run_id(host));
  SupervisedRun run{.pool = initial_pool(prepared, o.spares)};  // its layout errors come first
  check_progress_pattern(o.progress_pattern);
  const std::uint64_t floor = record_floor(o, context.env);
  const BadNodeMatcher matcher(prepared.inputs.profile.bad_node_patterns);
  if (o.spares > 0 && matcher.empty()) {
    log::warn(
        "--spares {}: the machine profile {} has no bad_node_patterns: only a rank killed by "
        "SIGKILL or SIGBUS on a host the launcher names can retire that host",
        o.spares, prepared.inputs.profile.name);
  }
  // Before the record opens: a --signal refused leaves no record of a run that never ran.
  const std::optional<walltime::Schedule> warning = warning_schedule(o, prepared, context);
  effects.defer_records();  // until the first launcher has started (NodeEffects)
  start_record(o, prepared, context, host, run, effects);
  check_launcher_program(prepared, context);
  sys::ProcessOptions options = process_options(o, matcher, run.pool);
  options.output_record_floor = floor;
  if (const LauncherRow* row = launcher_row(prepared.planned.launcher)) {
    options.launcher_parts.assign(row->parts.begin(), row->parts.end());
  }
  options.take_stacks = [&run, &context](const std::string& output_record) {
    try {  // the job is still running and supervised: a failed capture must not end that
      take_stacks(run.id, stacks_directory(output_record), context);
    } catch (const Error& e) {
      log::warn("stacks not taken: {}", e.what());
    }
  };
  options.warning = warning;
  options.signal_ranks = [&run, &context](int signal) {
    try {  // as take_stacks: the job runs on, warned or not
      if (signal_ranks_everywhere(run.id, signal, context)) return true;
      log::warn("{}", walltime::no_rank_warning(signal, run.id));
    } catch (const Error& e) {
      log::warn("{}", walltime::step_failed_warning(signal, e.what()));
    }
    return false;
  };
  sys::ProcessExecutor executor(with_python_hook(context, o), options);
  executor.when_started([&effects, &o, &context, pruned = false]() mutable {
    effects.write_deferred();
    if (effects.recording() && !std::exchange(pruned, true)) prune_records(o, context);
  });
  const int status = supervise_attempts(retry_policy(o), prepared, run, executor, effects);
  return {.status = status, .ending = run.summary.ending, .reason = run.summary.reason};
}

}  // namespace ezpz
