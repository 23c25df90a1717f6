#include "ezpz/smoke/smoke_flags.hpp"

#include <algorithm>
#include <array>
#include <variant>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ezpz/core/error.hpp"

namespace ezpz::smoke {
namespace {

// Where a flag's value goes; a bool is a flag that takes no value.
using Field =
    std::variant<std::string SmokeOptions::*, std::vector<int> SmokeOptions::*, int SmokeOptions::*,
                 double SmokeOptions::*, unsigned long long SmokeOptions::*, bool SmokeOptions::*>;

struct Flag {
  const char* name;
  Field field;
  const char* help;  // empty: left out of --help
  bool in_ezpz_test = true;
};

// The one table of the trainer's flags, in the order --help lists them.
const std::array<Flag, 18> k_flags = {{
    {"--model", &SmokeOptions::model, "Preset: debug, s, m, l, xl (default: 784-512-256-128-10)"},
    {"--layers", &SmokeOptions::layers, "Hidden layer sizes, e.g. 512,256,128"},
    {"--batch-size", &SmokeOptions::batch_size, "Samples per rank per step (default 128)"},
    {"--iters", &SmokeOptions::iters, "Training steps (default 100; presets 20 or 400)"},
    {"--warmup", &SmokeOptions::warmup, "Steps left out of the statistics (default 5)"},
    {"--lr", &SmokeOptions::lr, "Adam learning rate (default 1e-3)"},
    {"--dtype", &SmokeOptions::dtype, "fp32 or bf16 (default fp32)"},
    {"--threads", &SmokeOptions::threads, "Compute threads per rank (default 1)"},
    {"--seed", &SmokeOptions::seed, "Base seed; rank r uses seed x (r + 1) (default 1234)"},
    {"--log-freq", &SmokeOptions::log_freq, "Log and record every Nth step (default 1)"},
    {"--output-dir", &SmokeOptions::output_dir,
     "Where rank 0 writes metrics.jsonl, report.md, summary.json "
     "(default outputs/ezpz-test/<YYYY-MM-DD-HHMMSS>)"},
    {"--bucket-mb", &SmokeOptions::bucket_mb,
     "Gradient bucket size in MiB, all-reduced during backward; 0: one bucket after backward "
     "(default 25, DDP's)"},
    {"--collectives-only", &SmokeOptions::collectives_only,
     "Only measure all-reduce and all-gather bandwidth, no training"},
    {"--no-collectives", &SmokeOptions::no_collectives,
     "Skip the all-reduce and all-gather bandwidth sweep"},
    {"--sweep-max-mb", &SmokeOptions::sweep_max_mb,
     "Largest message of the bandwidth sweep in MB (default 4; sizes 1 KiB x 4^k)"},
    {"--probe", &SmokeOptions::probe, "Print what this libtorch can use as JSON and exit", false},
    // Test-only: proves the parameter check catches ranks that drift apart.
    {"--perturb-rank", &SmokeOptions::perturb_rank, ""},
    // Test-only: a hung rank for `ezpz stacks` to find (tests/integration/test_stacks_smoke.sh).
    {"--hang-rank", &SmokeOptions::hang_rank, ""},
}};

// What a number flag expects, said as ezpz's own count options say it (CLI11's own
// "Could not convert: --iters = many" names no expectation).
template <typename T>
CLI::Validator number(const char* expected) {
  return CLI::Validator(
      [expected](std::string& text) {
        T value{};
        if (CLI::detail::lexical_cast(text, value)) return std::string();
        return fmt::format("expected {}, got \"{}\"", expected, text);
      },
      "");
}

CLI::Option* declare(CLI::App& app, SmokeOptions& o, const Flag& flag) {
  return std::visit(
      [&](auto member) -> CLI::Option* {
        auto& value = o.*member;
        using Member = decltype(member);
        if constexpr (std::is_same_v<Member, bool SmokeOptions::*>) {
          return app.add_flag(flag.name, value, flag.help);
        } else if constexpr (std::is_same_v<Member, std::vector<int> SmokeOptions::*>) {
          return app.add_option(flag.name, value, flag.help)
              ->delimiter(',')
              ->check(number<int>("integers, e.g. 512,256,128"));
        } else if constexpr (std::is_same_v<Member, int SmokeOptions::*>) {
          return app.add_option(flag.name, value, flag.help)->check(number<int>("an integer"));
        } else if constexpr (std::is_same_v<Member, unsigned long long SmokeOptions::*>) {
          return app.add_option(flag.name, value, flag.help)
              ->check(number<unsigned long long>("a non-negative integer"));
        } else if constexpr (std::is_same_v<Member, double SmokeOptions::*>) {
          return app.add_option(flag.name, value, flag.help)->check(number<double>("a number"));
        } else {
          return app.add_option(flag.name, value, flag.help);
        }
      },
      flag.field);
}

bool is_switch(const Flag& flag) {
  return std::holds_alternative<bool SmokeOptions::*>(flag.field);
}

bool given(const CLI::App& app, const char* name) {
  const CLI::Option* option = app.get_option_no_throw(name);
  return option != nullptr && option->count() > 0;
}

const std::array<Preset, 5>& presets() {
  static const std::array<Preset, 5> k_presets = {{
      {"debug", 16, 20, {128, 64}},
      {"s", 64, 400, {8192, 8192, 4096}},
      {"m", 32, 400, {16384, 8192, 8192, 4096}},
      {"l", 32, 400, {16384, 16384, 8192, 4096}},
      {"xl", 16, 400, {24576, 16384, 16384, 8192, 4096}},
  }};
  return k_presets;
}

struct Alias {
  const char* alias;
  const char* name;
};
constexpr std::array<Alias, 5> k_aliases = {{
    {"small", "s"},
    {"medium", "m"},
    {"large", "l"},
    {"xlarge", "xl"},
    {"extra-large", "xl"},
}};

// A preset fills what the command line left unsaid.
void apply_preset(const CLI::App& app, SmokeOptions& o) {
  if (o.model.empty()) return;
  const Preset& preset = find_preset(o.model);
  if (!given(app, "--layers")) o.layers = preset.layers;
  if (!given(app, "--batch-size")) o.batch_size = preset.batch_size;
  if (!given(app, "--iters")) o.iters = preset.iters;
}

}  // namespace

void declare_flags(CLI::App& app, SmokeOptions& o, FlagSet set, const std::string& group) {
  for (const Flag& flag : k_flags) {
    if (set == FlagSet::ezpz_test && !flag.in_ezpz_test) continue;
    declare(app, o, flag)->group(*flag.help ? group : std::string());
  }
}

void finish_options(const CLI::App& app, SmokeOptions& o) {
  apply_preset(app, o);
  std::vector<std::string> problems = validate(o);
  if (!problems.empty()) throw Error(fmt::format("{}", fmt::join(problems, "; ")));
}

SmokeOptions parse_flags(const std::vector<std::string>& words) {
  SmokeOptions options;
  CLI::App app{"", "ezpz-smoke"};
  declare_flags(app, options, FlagSet::ezpz_test, "Trainer");
  app.allow_extras();
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw Error(e.what());
  }
  if (!app.remaining().empty()) {
    throw Error(fmt::format("{}: not a trainer flag (ezpz test --help lists them)",
                            app.remaining().front()));
  }
  finish_options(app, options);
  return options;
}

std::vector<std::string> given_flag_words(const CLI::App& app) {
  std::vector<std::string> words;
  for (const Flag& flag : k_flags) {
    const CLI::Option* option = app.get_option_no_throw(flag.name);
    if (option == nullptr || option->count() == 0) continue;
    words.emplace_back(flag.name);
    if (!is_switch(flag)) words.push_back(fmt::format("{}", fmt::join(option->results(), ",")));
  }
  return words;
}

const Preset& find_preset(const std::string& name) {
  std::string canonical = name;
  for (const Alias& a : k_aliases) {
    if (name == a.alias) canonical = a.name;
  }
  for (const Preset& preset : presets()) {
    if (canonical == preset.name) return preset;
  }
  throw Error(fmt::format("--model {}: unknown preset; expected one of debug, s, m, l, xl", name));
}

std::vector<std::string> validate(const SmokeOptions& o) {
  std::vector<std::string> problems;
  auto positive = [&](const char* flag, long value) {
    if (value < 1)
      problems.push_back(fmt::format("{} {}: expected a positive integer", flag, value));
  };
  if (std::any_of(o.layers.begin(), o.layers.end(), [](int n) { return n < 1; })) {
    problems.push_back(fmt::format("--layers {}: expected positive sizes, e.g. 512,256,128",
                                   fmt::join(o.layers, ",")));
  }
  positive("--batch-size", o.batch_size);
  if (o.warmup < 0) problems.push_back(fmt::format("--warmup {}: expected 0 or more", o.warmup));
  if (o.iters < o.warmup + 2) {
    problems.push_back(fmt::format(
        "--iters {}: must exceed --warmup {} by at least 2 (the loss check compares steps "
        "after warm-up)",
        o.iters, o.warmup));
  }
  if (!(o.lr > 0)) problems.push_back(fmt::format("--lr {}: expected a positive number", o.lr));
  if (o.dtype != "fp32" && o.dtype != "bf16") {
    problems.push_back(fmt::format("--dtype {}: unknown dtype; expected fp32 or bf16", o.dtype));
  }
  positive("--threads", o.threads);
  positive("--log-freq", o.log_freq);
  if (!(o.bucket_mb >= 0)) {
    problems.push_back(fmt::format("--bucket-mb {}: expected 0 or more", o.bucket_mb));
  }
  if (!(o.sweep_max_mb > 0)) {
    problems.push_back(
        fmt::format("--sweep-max-mb {}: expected a positive number", o.sweep_max_mb));
  }
  if (o.collectives_only && o.no_collectives) {
    problems.push_back("--collectives-only and --no-collectives: choose one");
  }
  return problems;
}

std::string describe_layers(const SmokeOptions& o) {
  return fmt::format("{}-{}-{}", o.input_size, fmt::join(o.layers, "-"), o.classes);
}

}  // namespace ezpz::smoke
