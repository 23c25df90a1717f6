// `ezpz env`: the current allocation and its launch line as shell variables, for
// batch scripts that do `eval "$(ezpz env)"` and then `$DIST_LAUNCH python3 train.py`.
#include "cmd_env.hpp"

#include <cstdio>

#include "ezpz/launch/job_env.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

CLI::App* setup_env(CLI::App& app, EnvOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand(
      "env", "Print the allocation and its launch line as shell exports (eval \"$(ezpz env)\")");
  add_verbosity_flags(*cmd, globals);
  add_plan_options(*cmd, o.plan);
  cmd->remove_option(cmd->get_option("--dry-run"));  // env only ever prints
  cmd->get_option("--json")->description("Print the variables as one JSON object");
  cmd->footer(
      "Examples:\n"
      "  eval \"$(ezpz env)\" && $DIST_LAUNCH python3 train.py\n"
      "  eval \"$(ezpz env --ppn 4)\" && echo \"$NGPUS ranks on $NHOSTS hosts\"\n"
      "  ezpz env --json\n"
      "Sets MACHINE, SCHEDULER, JOBID, HOSTFILE, NHOSTS, NGPU_PER_HOST, NGPUS, the variables\n"
      "the launch needs (MASTER_ADDR, MASTER_PORT, WORLD_SIZE ...) and DIST_LAUNCH, the\n"
      "launcher's words with every rank's torch env:// contract, ready for a command.\n"
      "DIST_LAUNCH is split on spaces when expanded: use eval \"$DIST_LAUNCH ...\" if a word\n"
      "in it has one.");
  return cmd;
}

int run_env(const EnvOptions& o, const Context& context) {
  PreparedLaunch prepared = prepare_launch(o.plan, {std::string(k_command_placeholder)}, context);
  const PlannedLaunch planned = with_hostfile(prepared.planned, prepared.inputs);
  sys::write_files(planned.plan.files);  // the hostfile HOSTFILE names
  const EnvList variables = job_variables(planned, prepared.context);
  const std::string text =
      o.plan.json ? render_variables_json(variables) : render_exports(variables);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace ezpz
