// `ezpz test`: the bundled libtorch trainer, planned exactly like `ezpz launch`,
// judged by the checks it reports, not by its exit code alone.
#include "cmd_test.hpp"

#include <fmt/format.h>

#include "attempt_loop.hpp"
#include "bundled.hpp"
#include "ezpz/error.hpp"
#include "ezpz/smoke_test.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

CLI::App* setup_test(CLI::App& app, TestOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand(
      "test", "Run the bundled libtorch smoke-test trainer on every rank and check it");
  add_verbosity_flags(*cmd, globals);
  cmd->prefix_command();
  add_plan_options(*cmd, o.plan);
  cmd->allow_extras();
  cmd->callback([&o, cmd] { o.trainer_args = cmd->remaining(); });
  cmd->footer(
      "Command: ezpz test [OPTIONS] [TRAINER FLAGS...]\n\n"
      "Launch options are those of 'ezpz launch'; anything else goes to the trainer\n"
      "(ezpz-smoke --help lists its flags: --model, --iters, --batch-size, --dtype ...).\n\n"
      "Examples:\n"
      "  ezpz test -n 2                       # 2 local ranks\n"
      "  ezpz test --model debug              # every slot of the allocation, a tiny model\n"
      "  ezpz test -n 8 --ppn 4 --iters 200 --dtype bf16\n"
      "  ezpz test --dry-run -n 2");
  return cmd;
}

namespace {

std::vector<std::string> trainer_words(const TestOptions& o) {
  std::vector<std::string> words = o.trainer_args;
  if (o.after_double_dash) {
    words.insert(words.end(), o.after_double_dash->begin(), o.after_double_dash->end());
  }
  return words;
}

}  // namespace

int run_test(const TestOptions& o, const Context& context) {
  std::string default_dir =
      fmt::format("{}/{}", sys::current_directory(), smoke_output_dir(std::time(nullptr)));
  SmokeCommand command = smoke_command(find_bundled_program(context, "ezpz-smoke",
                                                 "build it with libtorch (cmake -DEZPZ_WITH_SMOKE=ON)"), trainer_words(o), default_dir);
  PreparedLaunch prepared = prepare_launch(o.plan, command.argv, context);
  if (o.plan.dry_run) return print_plan(o.plan, prepared);
  // A run like any launch: recorded in .ezpz/runs (ezpz runs), leftovers stopped.
  int status = run_attempts(AttemptOptions{}, prepared, context);
  Verdict verdict = judge_smoke_run(
      sys::read_file_if_present(command.output_dir + "/summary.json"), status, command.output_dir);
  std::fflush(stdout);
  std::fputs((verdict.line + "\n").c_str(), stdout);
  if (verdict.passed) return 0;
  return status != 0 ? status : static_cast<int>(ExitCode::failure);
}

}  // namespace ezpz
