// `ezpz machines`: the machine profiles ezpz knows (bundled, installed, the
// user's), one of them in full, and the one that applies here and why.
#include "cmd_machines.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "ezpz/profile/profile_view.hpp"
#include "ezpz/sys/world.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {

CLI::App* setup_machines(CLI::App& app, MachinesOptions& o, GlobalOptions& globals) {
  CLI::App* cmd =
      app.add_subcommand("machines", "The machine profiles: list, show one, which applies");
  add_verbosity_flags(*cmd, globals);
  cmd->require_subcommand(0, 1);
  o.list = cmd->add_subcommand("list",
                               "Every profile: name, scheduler, launcher, when it applies, file");
  o.list->add_flag("--names", o.names_only, "Only the names, one per line");
  o.show = cmd->add_subcommand("show", "One profile as loaded, in the machines/ YAML format");
  o.show->add_option("NAME", o.show_name, "The profile's name (its file's stem)")->required();
  o.which = cmd->add_subcommand(
      "which", "The profile ezpz launch would use here, and the rule that chose it");
  o.which->add_option("--scheduler", o.scheduler, "As if under this scheduler: pbs, slurm, local");
  for (CLI::App* sub : {o.list, o.show, o.which}) add_verbosity_flags(*sub, globals);
  cmd->footer(
      "Examples:\n"
      "  ezpz machines                 # the same as 'ezpz machines list'\n"
      "  ezpz machines show aurora\n"
      "  ezpz machines which\n"
      "Profiles are read from the bundled machines/, then ~/.config/ezpz/machines, then each\n"
      "directory of EZPZ_MACHINES_PATH; a later file with the same name replaces an earlier one.");
  return cmd;
}

namespace {

int print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  return 0;
}

std::string names(const std::vector<MachineProfile>& profiles) {
  std::string out;
  for (const MachineProfile& p : profiles) out += p.name + "\n";
  return out;
}

std::string which(const MachinesOptions& o, const LoadedProfiles& profiles, const Env& env) {
  SchedulerChoice scheduler = choose_scheduler(o.scheduler, env);
  ProfileChoice choice =
      select_profile(profiles, std::nullopt, env, sys::hostname(), scheduler.kind);
  return fmt::format("{}\n  file: {}\n  rule: {}\n  scheduler: {} ({})\n", choice.profile->name,
                     choice.profile->source, choice.rule, to_string(scheduler.kind),
                     scheduler.rule);
}

}  // namespace

int run_machines(const MachinesOptions& o, const Context& context) {
  const LoadedProfiles loaded = sys::load_machine_profiles(context.env);
  if (o.show->parsed()) {
    return print(profile_yaml(loaded_profile_named(loaded, o.show_name, "ezpz machines show")));
  }
  if (o.which->parsed()) return print(which(o, loaded, context.env));
  return print(o.names_only ? names(loaded.profiles) : profiles_table(loaded));
}

}  // namespace ezpz
