// `ezpz submit`: a PBS or Slurm batch script that runs `ezpz launch -- CMD`,
// printed (--dry-run) or handed to qsub/sbatch.
#include "cmd_submit.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/launch/batch_script.hpp"
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
  o.nodes_option =
      cmd->add_option("-N,--nodes,--nhosts", o.nodes,
                      "Nodes for the job (default: what -n needs at --ppn or the profile's GPUs, "
                      "else 1)")
          ->type_name("N");
  // As `ezpz launch` takes them: they go on the job's launch line.
  add_rank_count_options(*cmd, o.layout);
  cmd->add_option("-t,--time", o.time,
                  "Walltime as sbatch takes it: 30 (minutes), 30:00, 1:30:00, 2-12, 2-00:00:00")
      ->type_name("TIME");
  cmd->add_option("-q,--queue", o.queue, "PBS queue or Slurm partition");
  cmd->add_option("-A,--account", o.account, "Project to charge");
  cmd->add_option("-J,--job-name", o.job_name,
                  "Job name (default: the script or module the command runs)");
  cmd->add_option("--filesystems", o.filesystems,
                  "PBS -l filesystems= (default: the machine profile's, e.g. home:flare)");
  cmd->add_option("--output", o.output, "File for the job's stdout and stderr");
  cmd->add_option("--machine", o.machine, "Machine profile, also given to ezpz launch");
  cmd->add_option("--launch-arg", o.launch_args,
                  "A word for `ezpz launch` in the job, before -- (repeatable): "
                  "--launch-arg=--cpu-bind=none")
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
      "  ezpz submit --scheduler slurm -n 8 --ppn 4 -t 30 -- ./a.out\n"
      "The job runs ezpz launch with this ezpz binary, in the directory it was submitted from,\n"
      "in the venv or conda env active at submit time (the script's comments say how).\n"
      "Prints the job id; exits with qsub's or sbatch's status.");
  return cmd;
}

namespace {

std::vector<std::string> command_words(
    const SubmitOptions& o, const std::optional<std::vector<std::string>>& after_double_dash) {
  if (!o.stray.empty()) {
    const std::string& word = o.stray.front();
    // {:?}: quoted with escapes, so that the error stays on one line.
    if (word.size() > 1 && word[0] == '-') {
      throw Error(fmt::format("submit: unknown option {:?}", word));
    }
    throw Error(fmt::format("submit: {:?} before --; put the command after --", word));
  }
  if (!after_double_dash || after_double_dash->empty()) {
    throw Error("no command given: ezpz submit [options] -- COMMAND");
  }
  return *after_double_dash;
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
  if (scheduler.from_path) {  // a guess: a login node may have both, or a stray client
    log::warn(
        "submit: no job, machine profile or --scheduler names a scheduler here; writing a {} "
        "script because {}",
        scheduler.kind == SchedulerKind::pbs ? "PBS" : "Slurm", scheduler.rule);
  }
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

// The words before "--" of the job's `ezpz launch`: the profile this job was
// written for, -n/--ppn, then the user's --launch-arg words.
std::vector<std::string> launch_words(const SubmitOptions& o) {
  std::vector<std::string> words;
  if (o.machine) words.insert(words.end(), {"--machine", *o.machine});
  if (auto n = given(o.layout.nprocs_option, o.layout.nprocs)) {
    words.insert(words.end(), {"-n", std::to_string(*n)});
  }
  if (auto ppn = given(o.layout.ppn_option, o.layout.ppn)) {
    words.insert(words.end(), {"--ppn", std::to_string(*ppn)});
  }
  words.insert(words.end(), o.launch_args.begin(), o.launch_args.end());
  check_env_words(words);
  return words;
}

// A profile's batch defaults and GPUs apply to its own scheduler only
// (Aurora's filesystems are PBS's); nullptr otherwise.
const MachineProfile* applying_profile(const Target& target) {
  bool applies = target.profile.scheduler.value_or(target.scheduler.kind) == target.scheduler.kind;
  return applies ? &target.profile : nullptr;
}

long requested_nodes(const SubmitOptions& o, const MachineProfile* profile) {
  return nodes_to_request({.nodes = given(o.nodes_option, o.nodes),
                           .nprocs = given(o.layout.nprocs_option, o.layout.nprocs),
                           .ppn = given(o.layout.ppn_option, o.layout.ppn),
                           .gpus_per_node = profile ? profile->gpus_per_node : 0,
                           .profile_name = profile ? profile->name : ""});
}

BatchRequest batch_request(const SubmitOptions& o, std::vector<std::string> command,
                           const Target& target, const Context& context) {
  const MachineProfile* profile = applying_profile(target);
  BatchRequest r;
  r.scheduler = target.scheduler.kind;
  r.scheduler_rule = target.scheduler.rule;
  r.nodes = requested_nodes(o, profile);
  r.walltime = o.time;
  r.queue = o.queue;
  r.account = o.account;
  if (!r.account) {
    if (auto from_env = account_from_env(context.env, r.scheduler)) {
      r.account = from_env->account;
      r.account_source = from_env->variable;
    }
  }
  r.job_name = o.job_name.value_or(default_job_name(command, r.scheduler));
  r.filesystems = o.filesystems;
  r.output = o.output;
  if (profile && !r.filesystems && !profile->batch.filesystems.empty()) {
    r.filesystems = profile->batch.filesystems;
  }
  if (profile) r.extra_directives = profile->batch.directives;
  r.environment = carried_environment(context.env);
  if (r.environment.setup_file && !sys::is_regular_file(*r.environment.setup_file)) {
    throw Error(
        fmt::format("EZPZ_SETUP_ENV={}: no such file; the job sources a file (write the "
                    "setup commands in one)",
                    *r.environment.setup_file));
  }
  r.ezpz = context.self_dir + "/ezpz";
  r.launch_args = launch_words(o);
  r.command = std::move(command);
  return r;
}

void warn_missing(const BatchRequest& request, const Target& target) {
  const MachineProfile* profile = applying_profile(target);
  if (!profile) return;
  for (const std::string& warning :
       missing_requirements(request, profile->batch.required, profile->name)) {
    log::warn("{}", warning);
  }
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
  sys::ScratchDirectory scratch(env, "ezpz-submit");
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
  std::vector<std::string> command = command_words(o, context.after_double_dash);
  if (o.time) parse_walltime(*o.time);  // refused before anything else is looked at
  Target target = choose_target(o, context.env);
  BatchRequest request = batch_request(o, std::move(command), target, context);
  std::string script = render_batch_script(request);
  warn_missing(request, target);  // once the script is known to be good
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
