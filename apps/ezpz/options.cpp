#include "options.hpp"

#include <unistd.h>

#include <array>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "ezpz/cli/cli_docs.hpp"
#include "ezpz/core/color.hpp"
#include "ezpz/core/log.hpp"
#include "subcommands.hpp"

namespace ezpz {

namespace {

// CLI11's usage line with what follows the options (docs::usage_tail): "Usage: ezpz launch
// [OPTIONS] [--] COMMAND [ARGS...]" rather than a line that leaves the command out.
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    std::string_view tail = docs::usage_tail(app->get_name());
    if (!tail.empty() && usage.ends_with('\n'))
      usage.insert(usage.size() - 1, " " + std::string(tail));
    return usage;
  }
};

}  // namespace

void setup_globals(CLI::App& app, GlobalOptions& options) {
  // Set before the subcommands are declared: each takes its parent's formatter.
  app.formatter(std::make_shared<UsageFormatter>());
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

namespace {

struct Alias {
  std::string_view typed;
  const char* option;
};
// The Python ezpz's spellings (its launch parser's names), mpiexec's -np and -ppn, torchrun's
// --nnodes and --nproc_per_node.
constexpr std::array<Alias, 11> k_aliases = {{
    {"-np", "--np"},
    {"--n", "--np"},
    {"--nprocs", "--np"},
    {"--world_size", "--np"},
    {"-ppn", "--ppn"},
    {"--nproc_per_node", "--ppn"},
    {"-nh", "--nhosts"},
    {"--nh", "--nhosts"},
    {"--nhost", "--nhosts"},
    {"--nnode", "--nhosts"},
    {"--nnodes", "--nhosts"},
}};

// `word` in the spelling of the option it means in `scope`, when its name (before any
// "=VALUE") is one of the aliases `scope` has.
std::optional<std::string> alias_of(const CLI::App& scope, std::string_view word) {
  const std::string_view name = word.substr(0, word.find('='));
  for (const Alias& alias : k_aliases) {
    if (name == alias.typed && scope.get_option_no_throw(alias.option)) {
      return alias.option + std::string(word.substr(name.size()));
    }
  }
  return std::nullopt;
}

// Whether `word` is an option of `scope` whose value is the next word.
bool takes_next_word(const CLI::App& scope, const std::string& word) {
  if (word.find('=') != std::string::npos) return false;
  const CLI::Option* option = scope.get_option_no_throw(word);
  return option != nullptr && option->get_expected_max() > 0;
}

const CLI::App* subcommand_named(const CLI::App& app, const std::string& word) {
  auto named = app.get_subcommands([&word](const CLI::App* sub) { return sub->check_name(word); });
  return named.empty() ? nullptr : named.front();
}

}  // namespace

std::optional<std::size_t> subcommand_index(const CLI::App& root,
                                            const std::vector<std::string>& reversed_words) {
  // The first word is at the back.
  for (std::size_t i = reversed_words.size(); i-- > 0;) {
    const std::string& word = reversed_words[i];
    if (word.size() <= 1 || word.front() != '-') return i;
    if (takes_next_word(root, word) && i > 0) --i;
  }
  return std::nullopt;
}

void apply_aliases(const CLI::App& app, CommandLine& line) {
  std::vector<std::string>& words = line.ezpz_words;
  const std::optional<std::size_t> at = subcommand_index(app, words);
  const CLI::App* scope = at ? subcommand_named(app, words[*at]) : nullptr;
  if (scope == nullptr) return;
  // The subcommand's options follow it, towards the front; the command's first word ends them.
  for (std::size_t i = *at; i-- > 0;) {
    if (auto spelled = alias_of(*scope, words[i])) words[i] = std::move(*spelled);
    if (words[i].size() <= 1 || words[i].front() != '-') return;
    if (takes_next_word(*scope, words[i]) && i > 0) --i;
  }
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
