// `ezpz submit`: a PBS or Slurm batch script that runs `ezpz launch -- CMD`,
// printed (--dry-run) or handed to qsub/sbatch.
#include "cmd_submit.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "ezpz/batch_script.hpp"
#include "ezpz/env.hpp"
#include "ezpz/error.hpp"
#include "ezpz/log.hpp"
#include "ezpz/sys/submit.hpp"
#include "ezpz/sys/world.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {

CLI::App* setup_submit(CLI::App& app, SubmitOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("submit", "Write a batch script for a command and submit it");
  // -q is the queue here, as for qsub: --quiet has no short form.
  cmd->add_flag("-v,--verbose", globals.verbose,
                "Debug output on stderr: what chose the scheduler");
  cmd->add_flag("--quiet", globals.quiet, "Only errors on stderr");
  add_color_option(*cmd, globals);
  cmd->add_option("--scheduler", o.scheduler, "pbs or slurm (default: detected)");
  cmd->add_option("-N,--nodes", o.nodes, "Nodes for the job (1)");
  cmd->add_option("-t,--time", o.time, "Walltime, HH:MM:SS");
  cmd->add_option("-q,--queue", o.queue, "PBS queue or Slurm partition");
  cmd->add_option("-A,--account", o.account, "Project to charge");
  cmd->add_option("-J,--job-name", o.job_name, "Job name (default: the command's file name)");
  cmd->add_option("--filesystems", o.filesystems,
                  "PBS -l filesystems= (default: the machine profile's, e.g. home:flare)");
  cmd->add_option("--output", o.output, "File for the job's stdout and stderr");
  cmd->add_option("--machine", o.machine, "Machine profile, also given to ezpz launch");
  cmd->add_option(
         "--launch-arg", o.launch_args,
         "A word for `ezpz launch` in the job, before -- (repeatable): --launch-arg=--ppn=4")
      ->allow_extra_args(false);
  cmd->add_flag("--dry-run", o.dry_run, "Print the script; submit nothing");
  cmd->add_option("--script-out", o.script_out, "Also keep the script in this file");
  cmd->allow_extras();
  cmd->callback([&o, cmd] { o.stray = cmd->remaining(); });
  cmd->footer(
      "Command: ezpz submit [OPTIONS] -- COMMAND [ARGS...]\n\n"
      "Examples:\n"
      "  ezpz submit -N 2 -t 01:00:00 -q debug -A myproj -- python3 train.py --lr 3e-4\n"
      "  ezpz submit --dry-run --machine aurora -N 4 -- python3 -m mypkg.train\n"
      "  ezpz submit --scheduler slurm -N 2 --launch-arg=--ppn=4 -- ./a.out\n"
      "The job runs ezpz launch with this ezpz binary, in the directory it was submitted from.\n"
      "Prints the job id; exits with qsub's or sbatch's status.");
  return cmd;
}

namespace {

std::vector<std::string> command_words(const SubmitOptions& o) {
  if (!o.stray.empty()) {
    const std::string& word = o.stray.front();
    // {:?}: quoted with escapes, so that the error stays on one line.
    if (word.size() > 1 && word[0] == '-') {
      throw Error(fmt::format("submit: unknown option {:?}", word));
    }
    throw Error(fmt::format("submit: {:?} before --; put the command after --", word));
  }
  if (!o.after_double_dash || o.after_double_dash->empty()) {
    throw Error("no command given: ezpz submit [options] -- COMMAND");
  }
  return *o.after_double_dash;
}

struct Target {
  SubmitScheduler scheduler;
  MachineProfile profile;
};

// The scheduler first (the profile is only one of its clues), then the profile
// that goes with it: a generic one is chosen by scheduler.
Target choose_target(const SubmitOptions& o, const Env& env) {
  LoadedProfiles profiles = sys::load_machine_profiles(env);
  const std::string host = sys::hostname();
  SubmitSchedulerInputs in;
  in.flag = o.scheduler;
  if (!o.scheduler) {
    SchedulerChoice job = choose_scheduler(std::nullopt, env);
    in.job = job.kind;
    in.job_rule = job.rule;
    ProfileChoice clue = select_profile(profiles, o.machine, env, host, job.kind);
    in.profile = clue.profile->scheduler;
    in.profile_name = clue.profile->name;
    in.qsub_on_path = sys::find_program("qsub", env).has_value();
    in.sbatch_on_path = sys::find_program("sbatch", env).has_value();
  }
  SubmitScheduler scheduler = choose_submit_scheduler(in);
  ProfileChoice choice = select_profile(profiles, o.machine, env, host, scheduler.kind);
  log::debug("scheduler: {} ({})", to_string(scheduler.kind), scheduler.rule);
  log::debug("machine: {} ({})", choice.profile->name, choice.rule);
  sys::warn_skipped_profiles(profiles);
  return {scheduler, *choice.profile};
}

// The job's `ezpz launch` would refuse a bad -x/--env name at run time, after
// the job waited in the queue: refuse it here.
void check_env_words(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    bool separate = (word == "-x" || word == "--env") && i + 1 < words.size();
    if (separate)
      parse_assignment(words[++i], "--launch-arg -x");
    else if (word.starts_with("--env="))
      parse_assignment(word.substr(6), "--launch-arg -x");
    else if (word.starts_with("-x") && word.size() > 2)
      parse_assignment(word.substr(2), "--launch-arg -x");
  }
}

BatchRequest batch_request(const SubmitOptions& o, std::vector<std::string> command,
                           const Target& target, const Context& context) {
  BatchRequest r;
  r.scheduler = target.scheduler.kind;
  r.nodes = o.nodes;
  r.walltime = o.time;
  r.queue = o.queue;
  r.account = o.account;
  r.job_name = o.job_name.value_or(default_job_name(command));
  r.filesystems = o.filesystems;
  r.output = o.output;
  // A profile's defaults are for its own scheduler (Aurora's filesystems are PBS's).
  const BatchDefaults& defaults = target.profile.batch;
  bool profile_applies = target.profile.scheduler.value_or(r.scheduler) == r.scheduler;
  if (profile_applies && !r.filesystems && !defaults.filesystems.empty()) {
    r.filesystems = defaults.filesystems;
  }
  if (profile_applies) r.extra_directives = defaults.directives;
  r.ezpz = context.self_dir + "/ezpz";
  // The job's launch uses the profile this job was written for.
  if (o.machine) r.launch_args = {"--machine", *o.machine};
  r.launch_args.insert(r.launch_args.end(), o.launch_args.begin(), o.launch_args.end());
  check_env_words(r.launch_args);
  r.command = std::move(command);
  return r;
}

std::string submitter_path(SchedulerKind kind, const Env& env) {
  const std::string program = kind == SchedulerKind::pbs ? "qsub" : "sbatch";
  auto path = sys::find_program(program, env);
  if (!path) {
    throw Error(fmt::format("{}: not found on PATH; submit from a {} login node, or use --dry-run",
                            program, kind == SchedulerKind::pbs ? "PBS" : "Slurm"));
  }
  return *path;
}

// Hands the script to qsub/sbatch from a file only this user can reach; it is
// removed afterwards (they keep their own copy), unless --script-out kept it.
int submit(const SubmitOptions& o, const std::string& script, const std::string& program,
           const Env& env) {
  sys::ScratchDirectory scratch(env);
  std::string path = o.script_out.value_or(scratch.path() + "/job.sh");
  if (!o.script_out) sys::write_script(path, script, "submit: script");
  sys::SubmitOutcome outcome = sys::run_submitter(program, path, scratch, env);
  if (outcome.exit_code != 0) {
    std::fputs(outcome.output.c_str(), stderr);  // whatever it said, it is not a job id
    return outcome.exit_code;
  }
  std::string job_id = job_id_from_output(outcome.output);
  std::fputs((job_id + "\n").c_str(), stdout);
  log::info("submitted job {} with {}", job_id, program);
  return 0;
}

}  // namespace

int run_submit(const SubmitOptions& o, const Context& context) {
  std::vector<std::string> command = command_words(o);
  if (o.time) check_walltime(*o.time);
  Target target = choose_target(o, context.env);
  std::string script = render_batch_script(batch_request(o, std::move(command), target, context));
  // Checked before --script-out is written: a failed submission leaves nothing behind.
  std::string program = o.dry_run ? "" : submitter_path(target.scheduler.kind, context.env);
  if (o.script_out) sys::write_script(*o.script_out, script, "--script-out");
  if (o.dry_run) {
    std::fputs(script.c_str(), stdout);
    return 0;
  }
  return submit(o, script, program, context.env);
}

}  // namespace ezpz
