// `ezpz kill`: stop what ezpz started. Every launch tags the launcher and its
// ranks with EZPZ_RUN_ID; kill signals exactly the tagged processes (one run's,
// or every run's), never an unrelated process whose command line looks alike.
// --all-nodes runs this same command on every node through the launcher (one
// rank per node), not over ssh.
#include "cmd_kill.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "ezpz/env.hpp"
#include "ezpz/error.hpp"
#include "ezpz/kill.hpp"
#include "ezpz/run_record.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/world.hpp"
#include "ezpz/yeet.hpp"
#include "plan_options.hpp"

namespace ezpz {

CLI::App* setup_kill(CLI::App& app, KillOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("kill", "Stop the processes ezpz started (tagged with their run id)");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option(
      "RUN_ID", o.run_id,
      "Only this run: its id, or any unique start of it (default: every ezpz run of yours)");
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
  cmd->footer(
      "Examples:\n"
      "  ezpz kill                      # every ezpz run of yours on this node\n"
      "  ezpz kill 20261122-061500-n01-4242 --signal INT\n"
      "  ezpz kill 20261122-0615            # any unique start of the id, as ezpz runs show\n"
      "  ezpz kill --all-nodes --dry-run");
  return cmd;
}

namespace {

int signal_number(const KillOptions& o) {
  if (auto signal = kill::parse_signal(o.signal)) return *signal;
  throw Error(fmt::format("--signal {}: expected a signal name or number (TERM, INT, KILL, HUP, "
                          "QUIT, USR1, USR2, STOP, CONT, ABRT, or 1-64)",
                          o.signal));
}

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

// What this node holds of ezpz's runs, signalled (or listed).
int kill_here(const KillOptions& o, const Context& context, int signal) {
  std::string node = yeet::node_name(context.env, sys::hostname());
  std::string prefix = o.on_node ? node + ": " : "";
  const std::string own_run = get_nonempty(context.env, kill::k_run_id_variable).value_or("");
  const std::vector<kill::Process> tagged =
      kill::select_targets(sys::list_processes(), "", ::getpid(), own_run);
  const std::string run_id = resolve_run(tagged, o.run_id, node);
  std::vector<kill::Process> targets = kill::select_targets(tagged, run_id, ::getpid(), own_run);
  if (targets.empty()) {
    std::printf("%sno ezpz processes%s on %s\n", prefix.c_str(),
                run_id.empty() ? "" : fmt::format(" of run {}", run_id).c_str(), node.c_str());
    return 0;
  }
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
    std::string action =
        !r.error.empty() ? fmt::format("failed ({}) to signal", r.error)
        : r.escalated    ? fmt::format("sent {} then SIGKILL to", kill::signal_name(signal))
                         : fmt::format("sent {} to", kill::signal_name(signal));
    if (!r.error.empty() || !r.gone) ++failures;
    std::printf("%s%s\n", prefix.c_str(), kill::describe(r.process, action).c_str());
  }
  return failures == 0 ? 0 : 1;
}

// The same command on every node, one rank each.
int kill_everywhere(const KillOptions& o, const Context& context) {
  std::vector<std::string> command = {context.self_dir + "/ezpz", "kill", "--on-node",
                                      "--signal", o.signal, "--grace", fmt::format("{}", o.grace_seconds)};
  if (o.dry_run) command.push_back("--dry-run");
  if (!o.run_id.empty()) command.push_back(o.run_id);
  PlanOptions plan;
  plan_one_rank_per_host(plan);
  PreparedLaunch prepared = prepare_launch(plan, command, context);
  return run_plan(prepared, context);
}

}  // namespace

int run_kill(const KillOptions& o, const Context& context) {
  int signal = signal_number(o);
  if (o.grace_seconds < 0) throw Error(fmt::format("--grace {}: expected seconds >= 0", o.grace_seconds));
  if (o.all_nodes && !o.on_node) return kill_everywhere(o, context);
  return kill_here(o, context, signal);
}

}  // namespace ezpz
