// `ezpz kill`: stop what ezpz started. Every launch tags the launcher and its
// ranks with EZPZ_RUN_ID; kill signals exactly the tagged processes (one run's,
// this job's, or with --all every run's), never an unrelated process whose
// command line looks alike.
// --all-nodes runs this same command on every node through the launcher (one
// rank per node), not over ssh.
#include "cmd_kill.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/stage/yeet.hpp"
#include "ezpz/supervise/kill.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/stacks.hpp"
#include "ezpz/sys/world.hpp"
#include "plan_options.hpp"

namespace ezpz {

CLI::App* setup_kill(CLI::App& app, KillOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("kill", "Stop the processes ezpz started (tagged with their run id)");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option("RUN_ID", o.run_id,
                  "Only this run: its id, or any unique start of it (default: this job's runs)");
  cmd->add_option("--job", o.job,
                  "Only the runs of this scheduler job (default inside a job: PBS_JOBID, "
                  "SLURM_JOB_ID)")
      ->type_name("ID");
  cmd->add_flag("--all", o.all, "Every ezpz run of yours on this node, whatever its job");
  cmd->add_option("-s,--signal", o.signal, "Signal to send: TERM, INT, KILL, HUP, USR1 ... or a number")
      ->capture_default_str();
  cmd->add_option("--grace", o.grace_seconds,
                  fmt::format("Seconds before SIGKILL for processes still running ({}, as launch "
                              "--grace)",
                              kill::k_grace_seconds));
  cmd->add_flag("--dry-run", o.dry_run, "List what would be signalled");
  cmd->add_flag("--all-nodes", o.all_nodes,
                "On every node of the allocation, through the launcher (one rank per node)");
  cmd->add_flag("--on-node", o.on_node)->group("");  // the per-node copy --all-nodes starts
  cmd->add_flag("--ranks-only", o.ranks_only)->group("");  // launch --signal's per-node copy
  cmd->footer(
      "Examples:\n"
      "  ezpz kill                      # inside a job: this job's runs on this node\n"
      "  ezpz kill 20261122-061500-n01-4242 --signal INT\n"
      "  ezpz kill 20261122-0615            # any unique start of the id, as ezpz runs show\n"
      "  ezpz kill --all                # every ezpz run of yours on this node\n"
      "  ezpz kill --all-nodes --dry-run\n"
      "Outside a job, ezpz kill without a run id or --all lists the runs and stops nothing.");
  return cmd;
}

namespace {

int signal_number(const KillOptions& o) {
  if (auto signal = kill::parse_signal(o.signal)) return *signal;
  throw Error(fmt::format("--signal {}: expected a signal name or number (TERM, INT, KILL, HUP, "
                          "QUIT, USR1, USR2, STOP, CONT, ABRT, or 1-64)",
                          o.signal));
}

// launch --signal's node step may take this long (the launcher starts one ezpz per node).
constexpr auto k_warning_step_limit = std::chrono::seconds(60);

// The launching ezpz escalates to SIGKILL on its own after its --grace, then records how
// the run ended: it gets this much longer before kill SIGKILLs it (and the record says lost).
constexpr auto k_record_margin = std::chrono::seconds(5);

// The run `given` names among those with processes here: its id, or any unique start of
// it (match_run_id, as `ezpz runs show` takes it); as given when none matches.
std::string resolve_run(const std::vector<kill::Process>& tagged, const std::string& given,
                        const std::string& node) {
  if (given.empty()) return given;
  std::vector<std::string> ids;
  for (const kill::Process& p : tagged) ids.push_back(p.run_id);
  return match_run_id(ids, given, "kill", "on " + node).value_or(given);
}

// The job whose runs a kill stops: --job, else (no run id, no --all) the job we are in.
std::string job_scope(const KillOptions& o, const Context& context) {
  if (!o.job.empty() || o.all || !o.run_id.empty()) return o.job;
  return kill::job_id_of([&](std::string_view name) { return get_nonempty(context.env, name); });
}

// No run id, no job, no --all: the runs are listed, none is stopped. On a login node
// shared by all of a user's jobs, "every run" is rarely what was meant.
[[noreturn]] void list_instead(const std::vector<kill::Process>& targets, const std::string& prefix,
                               const std::string& node) {
  std::printf("%sezpz runs on %s:\n", prefix.c_str(), node.c_str());
  for (const std::string& line : kill::describe_runs(targets)) {
    std::printf("%s  %s\n", prefix.c_str(), line.c_str());
  }
  std::fflush(stdout);
  throw Error(
      "kill: not inside a job and no run id given: nothing stopped; give a run id, or "
      "--all to stop every run listed");
}

std::string scope_words(const std::string& run_id, const std::string& job) {
  if (!run_id.empty()) return fmt::format(" of run {}", run_id);
  return job.empty() ? "" : fmt::format(" of job {}", job);
}

// Signals `targets` (or lists them, --dry-run), the launching ezpz first.
int stop(const KillOptions& o, const std::vector<kill::Process>& targets, int signal,
         const std::string& prefix) {
  std::vector<kill::Process> launchers = kill::controllers(targets, sys::command_of, ::getpid());
  if (o.dry_run) {
    for (const kill::Process& p : launchers) {
      std::printf("%s%s\n", prefix.c_str(), kill::describe(p, "would signal").c_str());
    }
    for (const kill::Process& p : targets) {
      std::printf("%s%s\n", prefix.c_str(), kill::describe(p, "would signal").c_str());
    }
    return 0;
  }
  auto grace = std::chrono::milliseconds(static_cast<long>(o.grace_seconds * 1000));
  // The launching ezpz first: it stops its run as Ctrl-C would, and reports it.
  std::vector<sys::SignalResult> results =
      sys::signal_processes(launchers, signal, grace + k_record_margin);
  for (sys::SignalResult& r : sys::signal_processes(targets, signal, grace)) {
    results.push_back(std::move(r));
  }
  int failures = 0;
  for (const sys::SignalResult& r : results) {
    std::string action = !r.error.empty() ? fmt::format("failed ({}) to signal", r.error)
                         : r.escalated ? fmt::format("sent {} then SIGKILL to", signal_name(signal))
                                       : fmt::format("sent {} to", signal_name(signal));
    if (!r.error.empty() || !r.gone) ++failures;
    std::printf("%s%s\n", prefix.c_str(), kill::describe(r.process, action).c_str());
  }
  return failures == 0 ? 0 : 1;
}

// What this node holds of ezpz's runs, signalled (or listed).
int kill_here(const KillOptions& o, const Context& context, int signal) {
  std::string node = yeet::node_name(context.env, sys::hostname());
  std::string prefix = o.on_node ? node + ": " : "";
  const std::string own_run = get_nonempty(context.env, kill::k_run_id_variable).value_or("");
  const std::vector<kill::Process> tagged =
      kill::select_targets(sys::list_processes(), "", ::getpid(), own_run);
  const std::string run_id = resolve_run(tagged, o.run_id, node);
  const std::string job = job_scope(o, context);
  std::vector<kill::Process> targets = kill::select_targets(tagged, run_id, ::getpid(), own_run);
  if (!job.empty()) targets = kill::of_job(targets, job);
  if (targets.empty()) {
    std::printf("%sno ezpz processes%s on %s\n", prefix.c_str(), scope_words(run_id, job).c_str(),
                node.c_str());
    return 0;
  }
  if (run_id.empty() && job.empty() && !o.all && !o.dry_run) list_instead(targets, prefix, node);
  return stop(o, targets, signal, prefix);
}

// The run's ranks on this node, signalled once: launch --signal's warning, which they survive.
int signal_ranks_here(const KillOptions& o, const Context& context, int signal) {
  const std::string node = yeet::node_name(context.env, sys::hostname());
  int failures = 0;
  for (const sys::SignalResult& r : sys::signal_once(sys::node_ranks(o.run_id, node), signal)) {
    const std::string action = !r.error.empty() ? fmt::format("failed ({}) to signal", r.error)
                               : r.gone         ? std::string("found gone")
                                                : fmt::format("sent {} to", signal_name(signal));
    if (!r.error.empty()) ++failures;
    std::printf("%s: %s\n", node.c_str(), kill::describe(r.process, action).c_str());
  }
  return failures == 0 ? 0 : 1;
}

// The same command on every node, one rank each.
int kill_everywhere(const KillOptions& o, const Context& context) {
  std::vector<std::string> command = {context.self_dir + "/ezpz", "kill", "--on-node",
                                      "--signal", o.signal, "--grace", fmt::format("{}", o.grace_seconds)};
  if (o.dry_run) command.push_back("--dry-run");
  if (o.all) command.push_back("--all");
  if (std::string job = job_scope(o, context); !job.empty())
    command.insert(command.end(), {"--job", job});
  if (!o.run_id.empty()) command.push_back(o.run_id);
  PlanOptions plan;
  plan_one_rank_per_host(plan);
  // A node step: under srun it overlaps the job's own step, whose runs it stops.
  return run_plan(prepare_launch(plan, command, context), context);
}

}  // namespace

int run_kill(const KillOptions& o, const Context& context) {
  int signal = signal_number(o);
  if (o.grace_seconds < 0) throw Error(fmt::format("--grace {}: expected seconds >= 0", o.grace_seconds));
  if (o.all && (!o.run_id.empty() || !o.job.empty())) {
    throw Error("kill: --all stops every run; give it no run id and no --job");
  }
  if (o.ranks_only) return signal_ranks_here(o, context, signal);
  if (o.all_nodes && !o.on_node) return kill_everywhere(o, context);
  return kill_here(o, context, signal);
}

bool signal_ranks_everywhere(const std::string& run_id, int signal, const Context& context) {
  const std::string output =
      node_step_output({context.self_dir + "/ezpz", "kill", "--on-node", "--ranks-only", "--signal",
                        std::to_string(signal), run_id},
                       k_warning_step_limit, context);
  bool reached = false;
  for (std::string_view line : split_lines(output)) {
    if (line.empty()) continue;
    log::write("ezpz:   ", std::string(line));
    reached = reached || line.find(": sent ") != std::string_view::npos;
  }
  return reached;
}

}  // namespace ezpz
