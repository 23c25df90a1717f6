// `ezpz launch`: gather, detect, select, plan, then print or run.
#include "cmd_launch.hpp"

#include <fmt/format.h>

#include "ezpz/error.hpp"

namespace ezpz {

CLI::App* setup_launch(CLI::App& app, LaunchOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("launch", "Launch a command on every rank of the allocation");
  add_verbosity_flags(*cmd, globals);
  // Everything from the first word that is not an ezpz option is the command.
  cmd->prefix_command();
  add_plan_options(*cmd, o.plan);
  add_attempt_options(*cmd, o.attempts);
  cmd->callback([&o, cmd] {
    o.command = cmd->remaining();
    o.plan.output_watched = o.attempts.idle_timeout_s > 0;
  });
  cmd->footer(
      "Command: ezpz launch [OPTIONS] [--] COMMAND [ARGS...]\n\n"
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
std::vector<std::string> command_words(const LaunchOptions& o) {
  std::vector<std::string> words = o.command;
  if (!words.empty() && words.front().size() > 1 && words.front()[0] == '-') {
    throw Error(fmt::format("launch: unknown option {}; put the command after --", words.front()));
  }
  if (o.after_double_dash) {
    if (!words.empty()) words.push_back("--");
    words.insert(words.end(), o.after_double_dash->begin(), o.after_double_dash->end());
  }
  return words;
}

}  // namespace

int run_launch(const LaunchOptions& o, const Context& context) {
  PreparedLaunch prepared = prepare_launch(o.plan, command_words(o), context);
  if (o.plan.dry_run) return print_plan(o.plan, prepared);
  return run_attempts(o.attempts, prepared, context);
}

}  // namespace ezpz
