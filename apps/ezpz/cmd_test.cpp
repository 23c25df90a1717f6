// `ezpz test`: the bundled libtorch trainer, planned exactly like `ezpz launch`,
// judged by the checks it reports, not by its exit code alone.
#include "cmd_test.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "bundled.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/smoke/compare.hpp"
#include "ezpz/smoke/smoke_test.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

CLI::App* setup_test(CLI::App& app, TestOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand(
      "test", "Run the bundled libtorch smoke-test trainer on every rank and check it");
  add_verbosity_flags(*cmd, globals);
  add_plan_options(*cmd, o.plan);
  add_attempt_options(*cmd, o.attempts);
  smoke::declare_flags(*cmd, o.trainer, smoke::FlagSet::ezpz_test, "Trainer (ezpz-smoke)");
  cmd->add_option("--compare", o.compare,
                  "Print how two runs differ (summary.json or its directory): A B compares "
                  "them without running; A alone runs, then compares A with this run")
      ->expected(1, 2);
  // Unknown words are refused in run_test, in ezpz's words rather than CLI11's.
  cmd->allow_extras();
  cmd->callback([&o, cmd] {
    o.trainer_words = smoke::given_flag_words(*cmd);
    o.extras = cmd->remaining();
  });
  cmd->footer(
      "Launch and supervision options are those of 'ezpz launch'; the trainer's flags may be\n"
      "mixed with them or follow '--'. They are checked before anything is launched.\n\n"
      "Examples:\n"
      "  ezpz test -n 2                       # 2 local ranks\n"
      "  ezpz test --model debug              # every slot of the allocation, a tiny model\n"
      "  ezpz test -n 8 --ppn 4 --time-limit 600 -- --iters 200 --dtype bf16\n"
      "  ezpz test -n 2 --collectives-only     # all-reduce and all-gather bandwidth only\n"
      "  ezpz test -n 2 --compare outputs/ezpz-test/<then>   # this run against an earlier one\n"
      "  ezpz test --dry-run -n 2");
  return cmd;
}

namespace {

std::vector<std::string> trainer_words(
    const TestOptions& o, const std::optional<std::vector<std::string>>& after_double_dash) {
  if (!o.extras.empty()) {
    throw Error(fmt::format(
        "test: {}: not an option of ezpz test nor a trainer flag (ezpz test --help lists both)",
        o.extras.front()));
  }
  std::vector<std::string> words = o.trainer_words;
  if (after_double_dash) {
    words.insert(words.end(), after_double_dash->begin(), after_double_dash->end());
  }
  return words;
}

// The trainer's outputs: where the user said, else a new outputs/ezpz-test/<time>[-N]
// (made now, so that two runs in the same second never share one; not under --dry-run,
// which writes nothing but the hostfile).
struct OutputDir {
  std::string path;
  bool made = false;
};

OutputDir output_dir(const TestOptions& o, const smoke::SmokeOptions& flags) {
  if (!flags.output_dir.empty()) return {flags.output_dir};
  std::string path =
      fmt::format("{}/{}", sys::current_directory(), smoke_output_dir(std::time(nullptr)));
  if (o.plan.dry_run) return {path};
  return {sys::create_new_directory(path), true};
}

PreparedLaunch prepare(const TestOptions& o, const SmokeCommand& command, const OutputDir& dir,
                       const Context& context) {
  try {
    return prepare_launch(o.plan, command.argv, context);
  } catch (const Error&) {
    std::error_code ignored;  // nothing half-written: the directory is still empty
    if (dir.made) std::filesystem::remove(dir.path, ignored);
    throw;
  }
}

// A summary.json, given as the file or the directory holding it. A path ezpz may not look into
// (EACCES: is_directory()'s throwing form ended `ezpz test` in abort()) is read as a file, and
// the read says why it cannot be.
report::SummaryText read_summary(const std::string& path) {
  std::error_code unreadable;
  std::string file =
      std::filesystem::is_directory(path, unreadable) ? path + "/summary.json" : path;
  std::optional<std::string> text = sys::read_file_if_present(file);
  if (text) return {file, *text};
  if (errno == ENOENT) throw Error(fmt::format("--compare {}: no such file", file));
  throw Error(fmt::format("--compare {}: {}", file, std::strerror(errno)));
}

void print_comparison(const report::SummaryText& before, const report::SummaryText& after) {
  std::fputs(report::comparison_text(before, after).c_str(), stdout);
}

}  // namespace

int run_test(const TestOptions& o, const Context& context) {
  if (o.compare.size() == 2) {
    const report::SummaryText before = read_summary(o.compare[0]);  // A's error before B's
    print_comparison(before, read_summary(o.compare[1]));
    return 0;
  }
  // Read now: a wrong path is found before anything is launched.
  std::optional<report::SummaryText> before;
  if (!o.compare.empty()) before = read_summary(o.compare[0]);
  const std::vector<std::string> words = trainer_words(o, context.after_double_dash);
  const smoke::SmokeOptions flags = smoke::parse_flags(words);  // before anything is launched
  const std::string trainer = find_bundled_program(
      context, "ezpz-smoke", "build it with libtorch (cmake -DEZPZ_WITH_SMOKE=ON)");
  const OutputDir dir = output_dir(o, flags);
  const SmokeCommand command = smoke_command(trainer, words, dir.path);
  const output::ConsoleMode mode = console_mode(o.attempts, context.env);
  TestOptions with_mode = o;
  with_mode.plan.output_records = mode != output::ConsoleMode::raw;
  PreparedLaunch prepared = prepare(with_mode, command, dir, context);
  if (o.plan.dry_run) return print_plan(with_mode.plan, prepared);
  // A run like any launch: recorded in .ezpz/runs (ezpz runs), leftovers stopped.
  with_mode.attempts.console = records_console(mode, prepared.planned.plan);
  const RunEnd end = run_attempts(with_mode.attempts, prepared, context);
  const int status = end.status;
  std::optional<std::string> summary =
      sys::read_file_if_present(command.output_dir + "/summary.json");
  const std::string why = end.reason.empty() ? "" : fmt::format("{}: {}", end.ending, end.reason);
  Verdict verdict = judge_smoke_run(summary, status, command.output_dir, why);
  std::fflush(stdout);
  std::fputs((verdict.line + "\n").c_str(), stdout);
  if (before && summary)
    print_comparison(*before, {command.output_dir + "/summary.json", *summary});
  if (verdict.passed) return 0;
  return status != 0 ? status : static_cast<int>(ExitCode::failure);
}

}  // namespace ezpz
