// ezpz: launch distributed PyTorch the right way on a laptop, a Slurm cluster
// or a PBS machine. main reads as the steps it takes; the subcommands are the
// rows of subcommands.cpp, each in its own cmd_<name>.cpp.
#include <csignal>
#include <cstdio>
#include <utility>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/sys/world.hpp"
#include "options.hpp"
#include "subcommands.hpp"

namespace {

// argv into the declared options; the words after "--" go to the context unparsed.
void parse_command_line(CLI::App& app, ezpz::CommandLine line, ezpz::Context& context) {
  ezpz::apply_aliases(app, line);  // -np, -ppn, -nh
  app.parse(line.ezpz_words);
  context.after_double_dash = std::move(line.after_double_dash);
}

// -v/-q/EZPZ_LOG_LEVEL for the log, --color/NO_COLOR for stdout.
void apply_output_options(const ezpz::GlobalOptions& globals, ezpz::Context& context) {
  ezpz::apply_globals(globals, context.env);
  context.color = ezpz::stdout_color(globals, context.env);
}

// `ezpz` alone: what it can do.
int print_help(const CLI::App& app) {
  std::fputs(app.help().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A write past `ulimit -f` fails (EFBIG) instead of killing ezpz: the record stops, the job
  // goes on (its launcher gets SIGXFSZ back at its default, core/signals.hpp).
  std::signal(SIGXFSZ, SIG_IGN);
  ezpz::Context context{ezpz::sys::capture_environment(), ezpz::sys::self_directory()};
  CLI::App app{"ezpz: launch distributed PyTorch on laptops, Slurm and PBS machines", "ezpz"};
  ezpz::GlobalOptions globals;
  ezpz::setup_globals(app, globals);
  ezpz::CommandLine line = ezpz::split_command_line(argc, argv);
  const std::vector<ezpz::Declared> subcommands =
      ezpz::declare_subcommands(app, globals, ezpz::lone_subcommand(app, line.ezpz_words));
  try {
    parse_command_line(app, std::move(line), context);
    apply_output_options(globals, context);
    if (auto status = ezpz::run_parsed(subcommands, context)) return *status;
    return print_help(app);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return ezpz::report_usage_error(e);
  } catch (const ezpz::Error& e) {
    return ezpz::report_error(e);
  }
}
