#include "subcommands.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "cmd_completion.hpp"
#include "cmd_doctor.hpp"
#include "cmd_env.hpp"
#include "cmd_kill.hpp"
#include "cmd_launch.hpp"
#include "cmd_machines.hpp"
#include "cmd_runs.hpp"
#include "cmd_stacks.hpp"
#include "cmd_submit.hpp"
#include "cmd_test.hpp"
#include "cmd_yeet.hpp"

namespace ezpz {
namespace {

template <typename Run>
struct OptionsOf;
template <typename Options>
struct OptionsOf<int (*)(const Options&, const Context&)> {
  using type = Options;
};

// A row's declare: `setup` binds the options that `run` later reads, so they live
// with the run function.
template <auto setup, auto run>
Declared declare(CLI::App& root, GlobalOptions& globals) {
  auto options = std::make_shared<typename OptionsOf<decltype(run)>::type>();
  CLI::App* app = setup(root, *options, globals);
  return {app, [options](const Context& context) { return run(*options, context); }};
}

constexpr std::array<Subcommand, 12> k_subcommands = {{
    {"launch", declare<setup_launch, run_launch>},
    {"test", declare<setup_test, run_test>},
    {"doctor", declare<setup_doctor, run_doctor>},
    {"yeet", declare<setup_yeet, run_yeet>},
    {"kill", declare<setup_kill, run_kill>},
    {"stacks", declare<setup_stacks, run_stacks>},
    {"runs", declare<setup_runs, run_runs>},
    {"submit", declare<setup_submit, run_submit>},
    {"machines", declare<setup_machines, run_machines>},
    {"env", declare<setup_env, run_env>},
    {"completion", declare<setup_completion, run_completion>},
    {"man", declare<setup_man, run_man>},
}};

}  // namespace

std::optional<std::string_view> lone_subcommand(const CLI::App& root,
                                                const std::vector<std::string>& reversed_words) {
  const std::optional<std::size_t> at = subcommand_index(root, reversed_words);
  if (!at) return std::nullopt;
  const auto named = [&](const Subcommand& row) { return row.name == reversed_words[*at]; };
  const auto* row = std::find_if(k_subcommands.begin(), k_subcommands.end(), named);
  if (row == k_subcommands.end() || row->name == "completion" || row->name == "man") {
    return std::nullopt;
  }
  return row->name;
}

std::vector<Declared> declare_subcommands(CLI::App& root, GlobalOptions& globals,
                                          std::optional<std::string_view> only) {
  std::vector<Declared> declared;
  for (const Subcommand& row : k_subcommands) {
    if (only && row.name != *only) continue;
    declared.push_back(row.declare(root, globals));
    // A programming error, met by every run of ezpz (so by every test) until fixed.
    if (declared.back().app->get_name() != row.name) {
      throw std::logic_error(fmt::format("the subcommand row \"{}\" declares \"{}\"", row.name,
                                         declared.back().app->get_name()));
    }
  }
  return declared;
}

std::optional<int> run_parsed(const std::vector<Declared>& declared, const Context& context) {
  for (const Declared& subcommand : declared) {
    if (subcommand.app->parsed()) return subcommand.run(context);
  }
  return std::nullopt;
}

}  // namespace ezpz
