#include "options.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "ezpz/color.hpp"
#include "ezpz/log.hpp"

namespace ezpz {

void setup_globals(CLI::App& app, GlobalOptions& options) {
  app.set_version_flag("--version", fmt::format("ezpz {} ({})", EZPZ_VERSION, EZPZ_GIT_HASH));
  add_verbosity_flags(app, options);
  app.require_subcommand(0, 1);
  app.footer(
      "Examples:\n"
      "  ezpz launch -- python3 train.py          # every GPU of the allocation\n"
      "  ezpz launch -n 8 --ppn 4 -- python3 train.py\n"
      "  ezpz launch --dry-run --json -- python3 train.py\n"
      "Run 'ezpz SUBCOMMAND --help' for the options of each.");
}

void add_verbosity_flags(CLI::App& app, GlobalOptions& options) {
  app.add_flag("-v,--verbose", options.verbose,
               "Debug output on stderr: which rule chose the scheduler, machine and layout");
  app.add_flag("-q,--quiet", options.quiet, "Only errors on stderr");
  add_color_option(app, options);
}

void add_color_option(CLI::App& app, GlobalOptions& options) {
  app.add_option("--color", options.color,
                 "Colour the output: auto (a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str("auto");
}

namespace {
bool color_for(const GlobalOptions& options, const Env& env, int fd) {
  // IsMember has vetted the word.
  return use_color(parse_color_mode(options.color).value_or(ColorMode::automatic), env,
                   ::isatty(fd) == 1);
}
}  // namespace

bool stdout_color(const GlobalOptions& options, const Env& env) {
  return color_for(options, env, STDOUT_FILENO);
}

CommandLine split_command_line(int argc, char** argv) {
  CommandLine line;
  int end = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      end = i;
      line.after_double_dash = std::vector<std::string>(argv + i + 1, argv + argc);
      break;
    }
  }
  for (int i = end - 1; i >= 1; --i) line.ezpz_words.emplace_back(argv[i]);
  return line;
}

void apply_globals(const GlobalOptions& options, const Env& env) {
  log::Level level = log::Level::warn;
  if (auto text = get_nonempty(env, "EZPZ_LOG_LEVEL")) {
    auto parsed = log::level_from_string(*text);
    if (!parsed) {
      throw Error(fmt::format("EZPZ_LOG_LEVEL={}: expected debug, info, warn or error", *text));
    }
    level = *parsed;
  }
  if (options.verbose > 0) level = log::Level::debug;
  if (options.quiet) level = log::Level::quiet;
  log::set_level(level);
  log::set_color(color_for(options, env, STDERR_FILENO));
}

int report_error(const Error& error) {
  log::write("ezpz: error: ", error.what());
  return static_cast<int>(error.code());
}

int report_usage_error(const CLI::ParseError& error) {
  log::write("ezpz: error: ", error.what());
  return static_cast<int>(ExitCode::usage);
}

}  // namespace ezpz
