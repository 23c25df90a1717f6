// ezpz: launch distributed PyTorch the right way on a laptop, a Slurm cluster
// or a PBS machine. main reads as the steps it takes; each subcommand lives
// in its own cmd_<name>.cpp.
#include <CLI/CLI.hpp>

#include "cmd_completion.hpp"
#include "cmd_doctor.hpp"
#include "cmd_env.hpp"
#include "cmd_kill.hpp"
#include "cmd_launch.hpp"
#include "cmd_machines.hpp"
#include "cmd_runs.hpp"
#include "cmd_submit.hpp"
#include "cmd_test.hpp"
#include "cmd_yeet.hpp"
#include "context.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/sys/world.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  ezpz::Context context{ezpz::sys::capture_environment(), ezpz::sys::self_directory()};
  CLI::App app{"ezpz: launch distributed PyTorch on laptops, Slurm and PBS machines", "ezpz"};
  ezpz::GlobalOptions globals;
  ezpz::LaunchOptions launch;
  ezpz::TestOptions test;
  ezpz::DoctorOptions doctor;
  ezpz::YeetOptions yeet;
  ezpz::KillOptions kill;
  ezpz::RunsOptions runs;
  ezpz::SubmitOptions submit;
  ezpz::MachinesOptions machines;
  ezpz::EnvOptions env;
  ezpz::CompletionOptions completion;
  ezpz::setup_globals(app, globals);
  CLI::App* launch_cmd = ezpz::setup_launch(app, launch, globals);
  CLI::App* test_cmd = ezpz::setup_test(app, test, globals);
  CLI::App* doctor_cmd = ezpz::setup_doctor(app, doctor, globals);
  CLI::App* yeet_cmd = ezpz::setup_yeet(app, yeet, globals);
  CLI::App* kill_cmd = ezpz::setup_kill(app, kill, globals);
  CLI::App* runs_cmd = ezpz::setup_runs(app, runs, globals);
  CLI::App* submit_cmd = ezpz::setup_submit(app, submit, globals);
  CLI::App* machines_cmd = ezpz::setup_machines(app, machines, globals);
  CLI::App* env_cmd = ezpz::setup_env(app, env, globals);
  ezpz::setup_completion(app, completion, globals);
  try {
    ezpz::CommandLine line = ezpz::split_command_line(argc, argv);
    ezpz::apply_aliases(app, line);  // -np, -ppn, -nh
    app.parse(line.ezpz_words);
    launch.after_double_dash = test.after_double_dash = line.after_double_dash;
    submit.after_double_dash = line.after_double_dash;
    ezpz::apply_globals(globals, context.env);  // -v/-q/EZPZ_LOG_LEVEL/--color
    context.color = ezpz::stdout_color(globals, context.env);
    if (launch_cmd->parsed()) return ezpz::run_launch(launch, context);
    if (test_cmd->parsed()) return ezpz::run_test(test, context);
    if (doctor_cmd->parsed()) return ezpz::run_doctor(doctor, context);
    if (yeet_cmd->parsed()) return ezpz::run_yeet(yeet, context);
    if (kill_cmd->parsed()) return ezpz::run_kill(kill, context);
    if (runs_cmd->parsed()) return ezpz::run_runs(runs, context);
    if (submit_cmd->parsed()) return ezpz::run_submit(submit, context);
    if (machines_cmd->parsed()) return ezpz::run_machines(machines, context);
    if (env_cmd->parsed()) return ezpz::run_env(env, context);
    if (ezpz::completion_parsed(completion)) return ezpz::run_completion(completion, app);
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return ezpz::report_usage_error(e);
  } catch (const ezpz::Error& e) {
    return ezpz::report_error(e);
  }
}
