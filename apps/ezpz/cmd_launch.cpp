// `ezpz launch`: gather, detect, select, plan, then print or run.
#include "cmd_launch.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/doctor/this_host.hpp"
#include "ezpz/launch/command_check.hpp"
#include "ezpz/supervise/attempt_loop.hpp"
#include "ezpz/sys/doctor_probes.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

CLI::App* setup_launch(CLI::App& app, LaunchOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("launch", "Launch a command on every rank of the allocation");
  add_verbosity_flags(*cmd, globals);
  // Everything from the first word that is not an ezpz option is the command.
  cmd->prefix_command();
  add_plan_options(*cmd, o.plan);
  add_attempt_options(*cmd, o.attempts);
  cmd->add_flag("--no-command-check", o.no_command_check,
                "Do not look for the command on this node before launching (see README)");
  cmd->callback([&o, cmd] {
    o.command = cmd->remaining();
    o.plan.output_watched = o.attempts.idle_timeout_s > 0;
  });
  cmd->footer(
      "Examples:\n"
      "  ezpz launch -- python3 train.py --lr 3e-4\n"
      "  ezpz launch -n 8 --ppn 4 -- python3 train.py\n"
      "  ezpz launch --nhosts 2 --exclude x4102c5s2b0n0 -- python3 train.py\n"
      "  ezpz launch -x NCCL_DEBUG=INFO --launcher-arg=--verbose -- ./a.out\n"
      "  ezpz launch --dry-run --json -- python3 train.py\n"
      "  ezpz launch --spares 2 --idle-timeout 600 -- python3 train.py\n"
      "Everything after '--' (or from the first word that is not an option above) is the\n"
      "command, passed to every rank exactly as written.");
  return cmd;
}

namespace {

// The command starts at the first word that is not an ezpz option. A "--"
// after that word is the command's own; an unknown option before the
// command is an error, not the command.
std::vector<std::string> command_words(
    const LaunchOptions& o, const std::optional<std::vector<std::string>>& after_double_dash) {
  std::vector<std::string> words = o.command;
  if (!words.empty() && words.front().size() > 1 && words.front()[0] == '-') {
    // The Python ezpz passed unknown words on to the launcher (--tag-output ...): say how here.
    throw Error(fmt::format(
        "launch: unknown option {0}; put the command after --, and a launcher's own flag in "
        "--launcher-arg={0}",
        words.front()));
  }
  if (after_double_dash) {
    if (!words.empty()) words.push_back("--");
    words.insert(words.end(), after_double_dash->begin(), after_double_dash->end());
  }
  return words;
}

// The PATH the ranks get: ezpz's own, unless the plan sets one (-x PATH=..., a profile).
Env ranks_path(const LaunchPlan& plan, const Env& env) {
  Env path;
  if (auto it = env.find("PATH"); it != env.end()) path.insert(*it);
  for (const auto& [name, value] : plan.env) {
    if (name == "PATH") path.insert_or_assign(name, value);
  }
  return path;
}

// Once here, rather than once per rank in the launcher's words. This node's view: in a
// multi-node job the others see the same shared filesystems (README: --no-command-check).
void check_command(const PreparedLaunch& prepared, const Context& context) {
  const std::string& word = prepared.request.command.front();
  CommandLookup lookup = sys::look_up_command(word, ranks_path(prepared.planned.plan, context.env));
  if (auto problem = command_problem(lookup)) throw Error(*problem, ExitCode::not_found);
}

// PBS_JOBID and PBS_NODEFILE kept from another job (a shell that carried them here): the ranks
// would start on that job's nodes. Said when launching only: a --dry-run may plan for a job
// from outside it.
void warn_foreign_nodefile(const PlanOptions& plan, const PlanInputs& inputs) {
  const Allocation& allocation = inputs.allocation;
  if (plan.hostfile || allocation.scheduler != SchedulerKind::pbs) return;
  const auto look_up = [&allocation] { return first_lookups(allocation.hosts); };
  if (doctor::lists_this_host(allocation.hosts, inputs.hostname, look_up)) return;
  log::warn("PBS_NODEFILE does not list this host ({}): PBS_JOBID={} is not this node's job",
            inputs.hostname, allocation.job_id);
}

// --dry-run --spares K: what the first attempt runs, on the active hosts, with the spares named
// (and the error a run gives when none can stay active).
PreparedLaunch with_spares(PreparedLaunch prepared, int spares) {
  if (spares == 0) return prepared;
  NodePool pool = initial_pool(prepared, spares);
  prepared.planned = plan_on_hosts(prepared, pool.active);
  prepared.context.spares = pool.spares;
  log::write("ezpz: ",
             fmt::format("spares (--spares {}): {}", spares, fmt::join(pool.spares, " ")));
  return prepared;
}

}  // namespace

int run_launch(const LaunchOptions& o, const Context& context) {
  const output::ConsoleMode mode = console_mode(o.attempts, context.env);
  PlanOptions plan = o.plan;
  plan.output_records = mode != output::ConsoleMode::raw;
  PreparedLaunch prepared =
      prepare_launch(plan, command_words(o, context.after_double_dash), context);
  if (plan.dry_run) return print_plan(plan, with_spares(prepared, o.attempts.spares));
  warn_foreign_nodefile(plan, prepared.inputs);
  if (!o.no_command_check) check_command(prepared, context);
  AttemptOptions attempts = o.attempts;
  attempts.console = records_console(mode, prepared.planned.plan);
  return run_attempts(attempts, prepared, context).status;
}

}  // namespace ezpz
